package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testsize"
)

const refunds = "readproof://demo/policies/refunds"
const cached = "readproof://demo/policies/cached"

func abortFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "cached v1\n"})
}

func mustMount(t *testing.T, f *fixture, run string, refs ...string) {
	t.Helper()
	for _, r := range refs {
		if _, err := f.s.Mount(context.Background(), run, r); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAbortReopen (issue 15): an aborted run is no longer open, keeps its
// entries under the aborted ref, and reopen brings the newest abort back.
func TestAbortReopen(t *testing.T) {
	t.Parallel()
	f := abortFixture(t)
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	mustMount(t, f, "r1", refunds, cached)
	tip, _ := f.s.ref(openRef("r1"))
	f.clock.Add(time.Minute)
	a, err := f.s.AbortRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	if a.Entries != 2 || a.Tip != tip || !a.AbortedAt.Equal(f.clock.Now()) || a.Ref != AbortedPrefix+"r1/"+string(a.Commit) {
		t.Fatalf("abort: %+v", a)
	}
	if open, _ := f.s.ref(openRef("r1")); open != "" {
		t.Fatal("the open ref survived the abort")
	}
	if _, err := f.s.Mount(context.Background(), "r1", refunds); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("mount into an aborted run: %v", err)
	}
	if _, err := f.s.CommitRun("r1"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("commit of an aborted run: %v", err)
	}
	if _, err := f.s.AbortRun("r1"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("abort twice: %v", err)
	}
	// the id may be started again; reopen waits until it is not open
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	mustMount(t, f, "r1", refunds)
	if _, err := f.s.ReopenRun("r1"); !errors.Is(err, ErrRunOpen) {
		t.Fatalf("reopen while open: %v", err)
	}
	f.clock.Add(time.Minute)
	b, err := f.s.AbortRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.s.AbortedRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 2 || list[0].Commit != b.Commit || list[1].Commit != a.Commit {
		t.Fatalf("aborted runs (want newest first): %+v", list)
	}
	if runs, _ := f.s.Runs(); len(runs) != 0 {
		t.Fatalf("Runs lists aborted runs: %+v", runs)
	}
	// reopen takes the newest abort: one entry
	r, err := f.s.ReopenRun("r1")
	if err != nil || r.Commit != b.Commit {
		t.Fatalf("reopen: %+v %v", r, err)
	}
	st, err := f.s.OpenRunNamed("r1")
	if err != nil || len(st.Entries) != 1 {
		t.Fatalf("reopened run: %+v %v", st, err)
	}
	// the open ref never gets back its pre-abort value (git pack-refs
	// prunes by value: an A-B-A would lose the run): a reopen commit on
	// the abort commit, with the tip's tree
	tip, err = f.s.ref(openRef("r1"))
	if err != nil {
		t.Fatal(err)
	}
	rc, err := f.s.git.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	bt, err := f.s.git.Commit(b.Tip)
	if err != nil {
		t.Fatal(err)
	}
	if tip == b.Tip || len(rc.Parents) != 1 || rc.Parents[0] != b.Commit || rc.Tree != bt.Tree || rc.Message != "reopen run r1\n" {
		t.Fatalf("reopened tip %s: %+v (abort %s, pre-abort tip %s)", tip, rc, b.Commit, b.Tip)
	}
	mustMount(t, f, "r1", cached)
	m, err := f.s.CommitRun("r1")
	if err != nil || len(m.Entries) != 2 {
		t.Fatalf("commit after reopen: %v %+v", err, m)
	}
	if _, err := f.s.ReopenRun("r1"); !errors.Is(err, ErrRunCommitted) {
		t.Fatalf("reopen of a committed id: %v", err)
	}
	if _, err := f.s.ReopenRun("never"); !errors.Is(err, ErrNotAborted) {
		t.Fatalf("reopen of a run never aborted: %v", err)
	}
	if _, err := f.s.AbortRun("r1"); !errors.Is(err, ErrRunCommitted) {
		t.Fatalf("abort of a committed run: %v", err)
	}
}

// TestGCDropsAbortedAfterGrace: gc keeps an aborted run (its ref and so
// its commits) within the grace period and deletes it after; with
// PruneNow the abort commit is gone from the object database.
func TestGCDropsAbortedAfterGrace(t *testing.T) {
	t.Parallel()
	requireGitBinary(t)
	f := abortFixture(t)
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	mustMount(t, f, "r1", refunds)
	a, err := f.s.AbortRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	f.clock.Add(59 * time.Minute)
	res, err := f.s.GC(ctx, gitstore.GCOptions{Grace: time.Hour, Now: f.clock.Now})
	if err != nil || len(res.Dropped) != 0 {
		t.Fatalf("gc within the grace period: %v %+v", err, res)
	}
	if list, _ := f.s.AbortedRuns(); len(list) != 1 {
		t.Fatalf("aborted run lost within the grace period: %+v", list)
	}
	f.clock.Add(2 * time.Minute)
	res, err = f.s.GC(ctx, gitstore.GCOptions{Grace: time.Hour, Now: f.clock.Now})
	if err != nil || len(res.Dropped) != 1 || res.Dropped[0].Commit != a.Commit {
		t.Fatalf("gc after the grace period: %v %+v", err, res)
	}
	if list, _ := f.s.AbortedRuns(); len(list) != 0 {
		t.Fatalf("aborted run kept after the grace period: %+v", list)
	}
	if _, err := f.s.ReopenRun("r1"); !errors.Is(err, ErrNotAborted) {
		t.Fatalf("reopen after gc: %v", err)
	}
	// the objects go with git's prune: --grace now removes them at once
	if err := f.s.StartRun("r2"); err != nil {
		t.Fatal(err)
	}
	b, err := f.s.AbortRun("r2")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.GC(ctx, gitstore.GCOptions{PruneNow: true}); err != nil {
		t.Fatal(err)
	}
	if ok, err := f.s.Git().Has(b.Commit); err != nil || ok {
		t.Fatalf("abort commit after gc --grace now: present=%v %v", ok, err)
	}
}

// TestAbortRacesMountAndReopenRacesGC: concurrent mounts and an abort lose
// no entry (every mount that succeeded is in the aborted run, every other
// failed as unknown); a reopen racing gc's drop leaves exactly one of the
// two outcomes.
func TestAbortRacesMountAndReopenRacesGC(t *testing.T) {
	t.Parallel()
	requireGitBinary(t)
	f := abortFixture(t)
	for round := 0; round < 4; round++ {
		id := fmt.Sprintf("race%d", round)
		if err := f.s.StartRun(id); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		ok := 0
		for w := 0; w < 4; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < 5; i++ {
					_, err := f.s.Mount(context.Background(), id, refunds)
					if errors.Is(err, ErrUnknownRun) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					ok++
					mu.Unlock()
				}
			}()
		}
		time.Sleep(time.Duration(round) * 2 * time.Millisecond)
		a, err := f.s.AbortRun(id)
		if err != nil {
			t.Fatal(err)
		}
		wg.Wait()
		if a.Entries != ok {
			t.Fatalf("round %d: %d mounts succeeded, the aborted run holds %d", round, ok, a.Entries)
		}
	}
	// reopen vs drop
	f.clock.Add(2 * time.Hour)
	var wg sync.WaitGroup
	var reopenErr error
	var dropped []AbortedRun
	wg.Add(2)
	go func() { defer wg.Done(); _, reopenErr = f.s.ReopenRun("race0") }()
	go func() {
		defer wg.Done()
		var err error
		dropped, err = f.s.dropAborted(context.Background(), f.clock.Now().Add(-time.Hour))
		if err != nil {
			t.Error(err)
		}
	}()
	wg.Wait()
	droppedRace0 := false
	for _, d := range dropped {
		droppedRace0 = droppedRace0 || d.RunID == "race0"
	}
	open, _ := f.s.ref(openRef("race0"))
	if (reopenErr == nil) == droppedRace0 || (reopenErr == nil) != (open != "") {
		t.Fatalf("reopen err %v, dropped race0 %v, open %q: want exactly one to win", reopenErr, droppedRace0, open)
	}
}

func requireGitBinary(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
}

// TestGCWhileAborting: gc (packing, pruning unreachable objects older than
// an hour) runs while runs are started, mounted, aborted and reopened; no
// abort commit or entry is lost and stock git fsck is clean: abort writes
// its commit before the refs move, as every writer does.
func TestGCWhileAborting(t *testing.T) {
	t.Parallel()
	requireGitBinary(t)
	f := abortFixture(t)
	ctx := context.Background()
	// READPROOF_LONG_TESTS=1 runs ten times the cycles, so more git gc
	// ref walks meet a deleted ref (docs/store-format.md, "A ref deleted
	// while git walks the refs").
	cycles := testsize.Pick(t, 6, 60)
	done := make(chan error, 1)
	go func() {
		done <- func() error {
			for i := 0; i < cycles; i++ {
				id := fmt.Sprintf("g%d", i)
				if err := f.s.StartRun(id); err != nil {
					return err
				}
				if _, err := f.s.Mount(ctx, id, refunds); err != nil {
					return err
				}
				if _, err := f.s.AbortRun(id); err != nil {
					return err
				}
				if _, err := f.s.ReopenRun(id); err != nil {
					return err
				}
				if _, err := f.s.Mount(ctx, id, cached); err != nil {
					return err
				}
				if _, err := f.s.AbortRun(id); err != nil {
					return err
				}
			}
			return nil
		}()
	}()
	gcs := 0
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil {
				t.Fatal(err)
			}
			running = false
		default:
		}
		if _, err := f.s.GC(ctx, gitstore.GCOptions{Grace: time.Hour}); err != nil {
			t.Fatal(err)
		}
		gcs++
	}
	if gcs < 2 {
		t.Fatal("the writer finished before the first gc: the test proves nothing")
	}
	list, err := f.s.AbortedRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != cycles {
		t.Fatalf("%d aborted runs after %d gcs, want %d: %+v", len(list), gcs, cycles, list)
	}
	for _, a := range list {
		if a.Entries != 2 {
			t.Errorf("aborted run %s holds %d entries, want 2", a.RunID, a.Entries)
		}
	}
	t.Logf("%d gcs ran while %d runs were aborted, reopened and aborted again", gcs, cycles)
	gitstore.Fsck(t, f.s.Path())
}

// FuzzSplitAbortedRef: an aborted run's ref name parses only when it is
// exactly <valid run id>/<40 hex>, and then rebuilds to itself.
func FuzzSplitAbortedRef(f *testing.F) {
	for _, s := range []string{"r1/0123456789abcdef0123456789abcdef01234567", "r1", "r1/", "/0123456789abcdef0123456789abcdef01234567",
		"a/b/0123456789abcdef0123456789abcdef01234567", "../0123456789abcdef0123456789abcdef01234567", "r1/0123456789ABCDEF0123456789abcdef01234567"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, rest string) {
		id, commit, err := SplitAbortedRef(rest)
		if err != nil {
			return
		}
		if validRun(id) != nil || len(commit) != 40 || id+"/"+string(commit) != rest {
			t.Fatalf("%q parsed as run %q, commit %q", rest, id, commit)
		}
		if abortedRef(id, commit) != AbortedPrefix+rest {
			t.Fatalf("%q does not rebuild", rest)
		}
	})
}

// TestAbortedAtAsStored: run abort says the abort's time as the abort
// commit records it (whole seconds), as run list and run reopen read it.
func TestAbortedAtAsStored(t *testing.T) {
	t.Parallel()
	f := abortFixture(t)
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(1500 * time.Millisecond)
	a, err := f.s.AbortRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	list, err := f.s.AbortedRuns()
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || !list[0].AbortedAt.Equal(a.AbortedAt) {
		t.Fatalf("run abort said aborted at %s, the store records %+v", a.AbortedAt.Format(time.RFC3339Nano), list)
	}
}

// TestAbortMessageAsDocumented: the abort commit's message is the form
// docs/store-format.md ("Aborted run") gives, for one entry and for two.
func TestAbortMessageAsDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "store-format.md"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(string(doc)), " ")
	m := regexp.MustCompile("the message `(abort run <id>)` \\(then a blank line and `([^`]+)`\\)").FindStringSubmatch(text)
	if m == nil {
		t.Fatal("docs/store-format.md no longer gives the abort commit's message in the form this test reads")
	}
	form := func(s string) string {
		s = regexp.QuoteMeta(s)
		s = strings.ReplaceAll(s, "<id>", `(\S+)`)
		s = strings.ReplaceAll(s, "<n>", `(\d+)`)
		return strings.ReplaceAll(s, `\(y\|ies\)`, `(y|ies)`)
	}
	want := regexp.MustCompile("^" + form(m[1]) + "\n\n" + form(m[2]) + "\n$")
	f := abortFixture(t)
	for i, refs := range [][]string{{refunds}, {refunds, cached}} {
		id := fmt.Sprintf("r%d", i)
		if err := f.s.StartRun(id); err != nil {
			t.Fatal(err)
		}
		mustMount(t, f, id, refs...)
		a, err := f.s.AbortRun(id)
		if err != nil {
			t.Fatal(err)
		}
		c, err := f.s.git.Commit(a.Commit)
		if err != nil {
			t.Fatal(err)
		}
		if !want.MatchString(c.Message) {
			t.Errorf("abort of %d entry(s): message %q is not the documented `%s`, blank line, `%s`", len(refs), c.Message, m[1], m[2])
		}
	}
}
