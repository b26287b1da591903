package store

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// halfState is one run's refs: what a reader of the refs alone would see.
type halfState struct {
	open     gitstore.OID
	aborted  []string // the commit ids under AbortedPrefix + id + "/"
	committe gitstore.OID
}

func refsOf(t *testing.T, f *fixture, id string) halfState {
	t.Helper()
	var st halfState
	var err error
	if st.open, err = f.s.ref(openRef(id)); err != nil {
		t.Fatal(err)
	}
	if st.committe, err = f.s.ref(runRef(id)); err != nil {
		t.Fatal(err)
	}
	refs, err := f.s.git.Refs(AbortedPrefix + id + "/")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		st.aborted = append(st.aborted, strings.TrimPrefix(r.Name, AbortedPrefix+id+"/"))
	}
	return st
}

// readerState is the state of run id as each reader reports it (open,
// committed or aborted: the id's open or committed run when it has one),
// and how many aborted runs of id run list shows; every reader must agree
// (TestHalfDoneStates).
func readerState(t *testing.T, f *fixture, id string) (string, int) {
	t.Helper()
	var says []string
	runs, err := f.s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if r.RunID == id {
			says = append(says, map[bool]string{true: "open", false: "committed"}[r.Open])
		}
	}
	ab, err := f.s.AbortedRuns()
	if err != nil {
		t.Fatal(err)
	}
	aborted := 0
	for _, a := range ab {
		if a.RunID == id {
			aborted++
		}
	}
	if len(says) > 1 || (len(says) == 0 && aborted == 0) {
		t.Fatalf("run list reports %v and %d aborted for %s, want one state", says, aborted, id)
	}
	list := "aborted"
	if len(says) == 1 {
		list = says[0]
	}
	_, err = f.s.OpenRunNamed(id) // run show
	show := "open"
	switch {
	case errors.Is(err, ErrRunCommitted):
		show = "committed"
	case errors.Is(err, ErrUnknownRun):
		show = "aborted" // no open run: run show looks for an aborted one
	case err != nil:
		t.Fatal(err)
	}
	if show != list {
		t.Fatalf("run show reports %s for %s, run list %s", show, id, list)
	}
	_, err = f.s.ManifestID(id)
	if (err == nil) != (show == "committed") || (show == "aborted" && strings.Contains(fmt.Sprint(err), "still open")) {
		t.Fatalf("manifest of a %s run: %v", show, err)
	}
	return show, aborted
}

// TestHalfDoneStates builds each state a killed `run abort`, `run reopen`
// or `run commit` can leave (the first ref of its transaction renamed, the
// second not), checks that every reader reports one state, and that the
// next write to the run (or gc) deletes the stale ref.
func TestHalfDoneStates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// start r1 with two entries
	setup := func(t *testing.T) (*fixture, gitstore.OID) {
		f := abortFixture(t)
		if err := f.s.StartRun("r1"); err != nil {
			t.Fatal(err)
		}
		mustMount(t, f, "r1", refunds, cached)
		tip, _ := f.s.ref(openRef("r1"))
		return f, tip
	}
	put := func(t *testing.T, f *fixture, tip gitstore.OID, msg string) gitstore.OID {
		c, err := f.s.git.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		sig := f.s.signature(f.clock.Now())
		id, err := f.s.git.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	update := func(t *testing.T, f *fixture, ups ...gitstore.RefUpdate) {
		if err := f.s.git.Update(ups...); err != nil {
			t.Fatal(err)
		}
	}
	// states: each builds the refs a killed process leaves and says which
	// state the run is in, and the stale ref
	states := []struct {
		name  string
		build func(t *testing.T, f *fixture, tip gitstore.OID) (ac gitstore.OID)
		want  string
		kind  string
	}{
		{"abort killed after its first transaction", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			ac := put(t, f, tip, "abort run r1\n\n2 entries mounted\n")
			update(t, f, gitstore.RefUpdate{Name: openRef("r1"), Old: tip, New: ac})
			return ac
		}, "aborted", HalfDoneAbort},
		{"abort killed between its last two renames", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			ac := put(t, f, tip, "abort run r1\n\n2 entries mounted\n")
			update(t, f, gitstore.RefUpdate{Name: openRef("r1"), Old: tip, New: ac})
			update(t, f, gitstore.RefUpdate{Name: abortedRef("r1", ac), Old: "", New: ac})
			return ac
		}, "aborted", HalfDoneAbort},
		{"reopen killed between its renames", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			a, err := f.s.AbortRun("r1")
			if err != nil {
				t.Fatal(err)
			}
			rc := put(t, f, a.Commit, "reopen run r1\n")
			update(t, f, gitstore.RefUpdate{Name: openRef("r1"), Old: "", New: rc})
			return a.Commit
		}, "open", HalfDoneReopen},
		{"commit killed between its renames", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			if _, err := f.s.CommitRun("r1"); err != nil {
				t.Fatal(err)
			}
			update(t, f, gitstore.RefUpdate{Name: openRef("r1"), Old: "", New: tip})
			return ""
		}, "committed", HalfDoneCommit},
		{"abort of an earlier version killed between its renames", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			ac := put(t, f, tip, "abort run r1\n\n2 entries mounted\n")
			update(t, f, gitstore.RefUpdate{Name: abortedRef("r1", ac), Old: "", New: ac})
			return ac
		}, "open", HalfDoneOldAbort},
		{"abort, then the id started again (not half done)", func(t *testing.T, f *fixture, tip gitstore.OID) gitstore.OID {
			a, err := f.s.AbortRun("r1")
			if err != nil {
				t.Fatal(err)
			}
			if err := f.s.StartRun("r1"); err != nil {
				t.Fatal(err)
			}
			return a.Commit
		}, "open", ""},
	}
	// healers: the next write to the run, and what each leaves: the state
	// and the refs (open: whether an open ref is left; aborted: how many
	// aborted refs)
	type outcome struct {
		err     error // nil: succeeds
		state   string
		open    bool
		aborted int
	}
	healers := []struct {
		name string
		run  func(f *fixture) error
		want map[string]outcome // by the state's want
	}{
		{"run abort", func(f *fixture) error { _, err := f.s.AbortRun("r1"); return err }, map[string]outcome{
			"aborted":   {nil, "aborted", false, 1},
			"open":      {nil, "aborted", false, 1},
			"committed": {ErrRunCommitted, "committed", true, 0},
		}},
		{"run reopen", func(f *fixture) error { _, err := f.s.ReopenRun("r1"); return err }, map[string]outcome{
			"aborted":   {nil, "open", true, 0},
			"open":      {ErrRunOpen, "open", true, 1},
			"committed": {ErrRunCommitted, "committed", false, 0},
		}},
		{"run start", func(f *fixture) error { return f.s.StartRun("r1") }, map[string]outcome{
			"aborted":   {nil, "open", true, 1},
			"open":      {ErrRunOpen, "open", true, 1},
			"committed": {ErrRunCommitted, "committed", false, 0},
		}},
		{"run mount", func(f *fixture) error { _, err := f.s.Mount(ctx, "r1", refunds); return err }, map[string]outcome{
			"aborted":   {ErrUnknownRun, "aborted", true, -1},
			"open":      {nil, "open", true, 0},
			"committed": {ErrRunCommitted, "committed", true, 0},
		}},
		{"run commit", func(f *fixture) error { _, err := f.s.CommitRun("r1"); return err }, map[string]outcome{
			"aborted":   {ErrUnknownRun, "aborted", false, 1},
			"open":      {nil, "committed", false, 0},
			"committed": {ErrRunCommitted, "committed", true, 0},
		}},
		{"gc", func(f *fixture) error { _, err := f.s.SettleRuns(ctx); return err }, map[string]outcome{
			"aborted":   {nil, "aborted", false, 1},
			"open":      {nil, "open", true, 0},
			"committed": {nil, "committed", false, 0},
		}},
	}
	for _, st := range states {
		for _, h := range healers {
			t.Run(st.name+"/"+h.name, func(t *testing.T) {
				t.Parallel()
				f, tip := setup(t)
				ac := st.build(t, f, tip)
				before := refsOf(t, f, "r1")
				kind, stale, err := f.s.HalfDone("r1", before.open, before.committe)
				if err != nil || kind != st.kind {
					t.Fatalf("HalfDone: %q %q %v, want %q", kind, stale, err, st.kind)
				}
				got, listed := readerState(t, f, "r1")
				if got != st.want {
					t.Fatalf("readers report %s, want %s", got, st.want)
				}
				if wantListed := map[bool]int{true: 1}[st.want == "aborted" || st.kind == ""]; listed != wantListed {
					t.Fatalf("run list shows %d aborted runs of r1, want %d", listed, wantListed)
				}
				want := h.want[st.want]
				if st.kind == "" {
					// a new run beside an old abort: writes see the open run
					// and leave the aborted one
					want.aborted = max(want.aborted, 1)
					if h.name == "run abort" {
						want.aborted = 2
					}
					if h.name == "run commit" || h.name == "run mount" || h.name == "gc" {
						want.aborted = 1
					}
				}
				if st.kind == HalfDoneOldAbort && h.name == "run mount" {
					// a mount looks for no aborted ref: the open run moves
					// on, and the old abort reads as an earlier abort
					want.aborted = 1
				}
				err = h.run(f)
				if (want.err == nil) != (err == nil) || (want.err != nil && !errors.Is(err, want.err)) {
					t.Fatalf("%s: %v, want %v", h.name, err, want.err)
				}
				after := refsOf(t, f, "r1")
				got, listed = readerState(t, f, "r1")
				if got != want.state {
					t.Fatalf("after %s readers report %s, want %s", h.name, got, want.state)
				}
				if (after.open != "") != want.open || (want.aborted >= 0 && len(after.aborted) != want.aborted) {
					t.Fatalf("after %s: open %q, aborted %v; want open %v and %d aborted", h.name, after.open, after.aborted, want.open, want.aborted)
				}
				if st.kind == HalfDoneReopen && slices.Contains(after.aborted, string(ac)) && err == nil {
					t.Fatalf("after %s the reopened run's aborted ref %s is left", h.name, ac)
				}
				kind, stale, err = f.s.HalfDone("r1", after.open, after.committe)
				if err != nil || (kind != "" && want.err == nil) {
					t.Fatalf("after %s still half done: %s %s %v", h.name, kind, stale, err)
				}
				// run list shows the aborted refs but a stale one, and an
				// abort that has only its open ref so far
				wantListed := len(after.aborted)
				switch {
				case kind == HalfDoneReopen || kind == HalfDoneOldAbort:
					wantListed--
				case kind == HalfDoneAbort && len(after.aborted) == 0:
					wantListed++
				}
				if listed != wantListed {
					t.Fatalf("after %s run list shows %d aborted runs of r1, want %d", h.name, listed, wantListed)
				}
				// the entries are all there, in the one state
				switch want.state {
				case "open":
					r, err := f.s.OpenRunNamed("r1")
					if err != nil || (st.kind != "" && h.name != "run start" && len(r.Entries) < 2) {
						t.Fatalf("open run after %s: %v %+v", h.name, err, r)
					}
				case "aborted":
					ab, _ := f.s.AbortedRuns()
					if !slices.ContainsFunc(ab, func(a AbortedRun) bool { return a.Entries == 2 }) {
						t.Fatalf("aborted run after %s: %+v", h.name, ab)
					}
				}
			})
		}
	}
}
