package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledAbortReopen kills `readproof run abort` of an open run and
// `readproof run reopen` of an aborted one at each rename and unlink they
// make on a ref or packed-refs, read from a trace of the whole command
// (killMovePoints: an abort of a packed open run releases packed-refs.lock
// twice, once per transaction, so lock releases are no kill points), with
// loose refs and after `readproof gc` (the open or aborted ref only in
// packed-refs). TestKilledAborts kills them at random moments. After each
// kill, verify passes, every ref names a complete object graph, the run
// keeps a ref and `run list` shows it in exactly one state, open or
// aborted, with its two entries (docs/store-format.md, "Half-done
// transitions"). The same command again then completes it, saying what
// the whole command says, or, when the kill left the run in the state the
// command makes, refuses it: `run abort` of an aborted run as "unknown run
// (not open)", `run reopen` of an open one as "run already open"; a
// reopen's aborted ref left beside the open run is deleted by the next
// `run abort`. By default the abort runs after gc and the reopen with
// loose refs, each killed where it leaves the run with two refs (the
// abort at its version of packed-refs, the reopen at the aborted ref's
// removal); READPROOF_LONG_TESTS=1 runs both with both, killed at every
// point.
func TestKilledAbortReopen(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, store, env := killProject(t, 2)
	const id = "o1"
	openRef, abortedRefs := "refs/heads/readproof/open/"+id, "refs/heads/readproof/aborted/"+id+"/"
	mustRP(t, dir, "run", "start", id)
	mustRP(t, dir, "run", "mount", id, uris[0], uris[1])
	bases := map[string]string{}
	save := func(name string) {
		t.Helper()
		bases[name] = filepath.Join(t.TempDir(), name)
		copyStore(t, store, bases[name])
	}
	gc := func(ref string) {
		t.Helper()
		mustRP(t, dir, "gc")
		if fi, err := os.Stat(filepath.Join(store, "refs", "heads", "main")); err == nil && !fi.IsDir() {
			t.Fatal("refs/heads/main is loose after gc; the test needs every ref packed")
		}
		if ref == "" {
			return
		}
		if _, err := os.Stat(filepath.Join(store, ref)); err == nil {
			t.Fatalf("%s is loose after gc; the test needs it only in packed-refs", ref)
		}
	}
	save("open")
	gc(openRef)
	save("open, packed")
	if err := os.RemoveAll(store); err != nil {
		t.Fatal(err)
	}
	copyStore(t, bases["open"], store)
	mustRP(t, dir, "run", "abort", id)
	save("aborted")
	aborted := gitIn(t, store, "for-each-ref", "--format=%(refname)", abortedRefs)
	gc(aborted)
	save("aborted, packed")

	refs := func() (open, aborted int) {
		t.Helper()
		for _, ref := range strings.Fields(gitIn(t, store, "for-each-ref", "--format=%(refname)", openRef, abortedRefs)) {
			if ref == openRef {
				open++
			} else {
				aborted++
			}
		}
		return open, aborted
	}
	// entries checks that the run has its two entries: `run show` of an
	// aborted run refuses, saying how many it has.
	entries := func(at, state string) {
		t.Helper()
		if state == "aborted" {
			if o, e, err := rp(t, dir, "run", "show", id); err == nil || !strings.Contains(e, "with 2 entries)") {
				t.Fatalf("%s: run show of aborted run %s: %v\n%s%s, want a refusal naming its 2 entries", at, id, err, o, e)
			}
			return
		}
		var st struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "run", "show", id)), &st); err != nil || len(st.Entries) != 2 {
			t.Fatalf("%s: run %s has %d entries (%v), want 2", at, id, len(st.Entries), err)
		}
	}
	// again runs the command again and returns what it says and whether
	// it was refused.
	again := func(verb string) (stdout, stderr string, refused bool) {
		t.Helper()
		var o, e strings.Builder
		cmd := exec.Command("readproof", "run", verb, id)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &o, &e
		err := cmd.Run()
		return o.String(), e.String(), err != nil
	}
	cases := []struct {
		verb, base string
		from, to   string // the run's state before and after
		refusal    string // what the command again says when the kill left the run in state to
	}{
		{"abort", "open", "open", "aborted", "unknown run (not open)"},
		{"reopen", "aborted", "aborted", "open", "run already open"},
	}
	kills, half := 0, 0
	for i, c := range cases {
		for _, packed := range []bool{false, true} {
			if !testsize.Long() && packed != (i == 0) {
				continue
			}
			base := c.base
			if packed {
				base += ", packed"
			}
			name := "run " + c.verb + " of the " + base + " run"
			reset := func() {
				t.Helper()
				if err := os.RemoveAll(store); err != nil {
					t.Fatal(err)
				}
				copyStore(t, bases[base], store)
			}
			reset()
			o0, a0 := refs()
			points, whole := killMovePoints(t, strace, dir, env, store, "run", c.verb, id)
			if got := listedState(t, dir, id); got != c.to {
				t.Fatalf("%s: the run is %s, want %s", name, got, c.to)
			}
			if len(points) < 2 {
				t.Fatalf("%s: moved refs by %d renames and unlinks (%q), want at least 2", name, len(points), points)
			}
			// abortID is the abort commit's id, in the name of the
			// aborted ref an abort creates.
			abortID := ""
			if c.verb == "abort" {
				abortID = strings.TrimPrefix(gitIn(t, store, "for-each-ref", "--format=%(refname)", abortedRefs), abortedRefs)
			}
			var states []string
			for i, p := range points {
				if !testsize.Long() && !(p.Kind == "rename" && strings.HasPrefix(p.Paths[0], "packed-refs.")) && !(p.Kind == "unlink" && c.verb == "reopen") {
					// By default where the run is left with two refs:
					// the abort's version of packed-refs, the reopen's
					// removal of the aborted ref.
					continue
				}
				reset()
				killed := killAt(t, strace, dir, env, p, "run", c.verb, id)
				// The abort commit holds the abort's time, in seconds:
				// a kill point named by its ref is read again from a
				// trace made in the second of the kill.
				for try := 1; !killed && abortID != "" && strings.Contains(p.Call, abortID) && try <= 5; try++ {
					if left := time.Until(time.Now().Truncate(time.Second).Add(time.Second)); left < 300*time.Millisecond {
						time.Sleep(left)
					}
					reset()
					again, _ := killMovePoints(t, strace, dir, env, store, "run", c.verb, id)
					if len(again) != len(points) {
						t.Fatalf("%s: traced again, %d points (%q), first %d (%q)", name, len(again), again, len(points), points)
					}
					p = again[i]
					reset()
					killed = killAt(t, strace, dir, env, p, "run", c.verb, id)
				}
				if !killed {
					t.Fatalf("%s: not killed at %s (the point was read from a trace of the whole command)", name, p)
				}
				kills++
				at := fmt.Sprintf("%s, killed at %s", name, p)
				checkKilled(t, dir, store, at)
				open, abortedN := refs()
				if open+abortedN == 0 {
					t.Fatalf("%s: no ref left for run %s", at, id)
				}
				state := listedState(t, dir, id)
				entries(at, state)
				what := state
				switch {
				case open == o0 && abortedN == a0 && state == c.from:
					what = "undone"
				case open+abortedN == 2:
					what, half = state+", half done", half+1
				}
				states = append(states, fmt.Sprintf("%s: %s (%d open, %d aborted refs)", p, what, open, abortedN))
				waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
				out, errs, refused := again(c.verb)
				switch {
				case state == c.to && refused:
					if !strings.Contains(errs, c.refusal) {
						t.Fatalf("%s (%s): the %s again refused with\n%s\nwant %q", at, what, c.verb, errs, c.refusal)
					}
				case refused:
					t.Fatalf("%s (%s): the %s again: %s", at, what, c.verb, errs)
				case out != whole:
					t.Fatalf("%s (%s): the %s again says\n%s\nthe whole %s\n%s", at, what, c.verb, out, c.verb, whole)
				}
				if got := listedState(t, dir, id); got != c.to {
					t.Fatalf("%s (%s), then the %s again: the run is %s, want %s", at, what, c.verb, got, c.to)
				}
				entries(at+", then again", c.to)
				mustRP(t, dir, "verify")
				open, abortedN = refs()
				if c.to == "open" && open == 1 && abortedN == 1 && refused {
					// A reopen's aborted ref left: the next abort
					// deletes it.
					rpWith(t, dir, env, "run", "abort", id)
					if open, abortedN := refs(); open != 0 || abortedN != 1 {
						t.Fatalf("%s (%s), then abort: %d open and %d aborted refs, want 0 and 1", at, what, open, abortedN)
					}
					continue
				}
				if want := map[string]int{"open": 1}[c.to]; open != want || abortedN != 1-want {
					t.Fatalf("%s (%s), then the %s again: %d open and %d aborted refs, want %d and %d", at, what, c.verb, open, abortedN, want, 1-want)
				}
			}
			t.Logf("%s: killed at %d of %d points:\n\t%s", name, len(states), len(points), strings.Join(states, "\n\t"))
		}
	}
	t.Logf("killed aborts and reopens %d times; %d left the run with two refs", kills, half)
	if half == 0 {
		t.Fatal("no kill left a run with two refs; the test proves nothing")
	}
	fsck(t, store)
}

// TestKilledCommit kills `readproof run commit` of an open run of 34
// documents after `readproof gc` at each rename and unlink it makes on a
// ref or packed-refs, read from a trace of the whole commit (killPoints):
// the run's ref (loose: refs under refs/tags/ stay loose), then the open
// run's removal (a version of packed-refs without it, then its lock), then
// the journal (loose: a group of fewer than 32 after a loose ref). After
// each kill, verify passes, every ref names a complete object graph, `run
// list` shows the run once, open or committed (an open ref left beside
// the run's ref reads as committed: docs/store-format.md, "Half-done
// transitions"), the journal has not moved without the run's ref, and the
// commit again completes an open run, saying what the whole commit says
// (with its own manifest id: the manifest holds the time), or refuses a
// committed one as "run already committed as manifest M", M the run ref's.
// By default it is killed at the run ref and at packed-refs,
// READPROOF_LONG_TESTS=1 at every point, lock releases included.
func TestKilledCommit(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	const docs = 34
	dir, uris, store, env := killProject(t, docs+1)
	const id = "o1"
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	mustRP(t, dir, "run", "start", id)
	mustRP(t, dir, append([]string{"run", "mount", id}, uris[1:]...)...)
	mustRP(t, dir, "gc")
	for _, ref := range []string{"refs/heads/main", "refs/heads/readproof/open/" + id} {
		if _, err := os.Stat(filepath.Join(store, ref)); err == nil {
			t.Fatalf("%s is loose after gc; the test needs it only in packed-refs", ref)
		}
	}
	base := filepath.Join(t.TempDir(), "base")
	copyStore(t, store, base)
	reset := func() {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
	}
	const runRef = "refs/tags/readproof/runs/" + id
	refs := func() (journal, run, r0 string) {
		t.Helper()
		for _, line := range strings.Split(gitIn(t, store, "for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/main", "refs/tags/readproof/runs/"), "\n") {
			oid, name, _ := strings.Cut(line, " ")
			switch name {
			case "refs/heads/main":
				journal = oid
			case runRef:
				run = oid
			case "refs/tags/readproof/runs/r0":
				r0 = oid
			}
		}
		return journal, run, r0
	}
	journal0, _, r00 := refs()
	points, whole := killPoints(t, strace, dir, env, store, "run", "commit", id)
	_, wholeRun, _ := refs()
	if wholeRun == "" || !strings.Contains(whole, wholeRun) {
		t.Fatalf("the whole commit says %q, and the run ref is %q", whole, wholeRun)
	}
	if len(points) < 3 {
		t.Fatalf("the commit moved refs by %d renames and unlinks (%q), want at least 3", len(points), points)
	}
	var states []string
	committed := 0
	for _, p := range points {
		if !testsize.Long() && p.Paths[0] != runRef+".lock" && !(p.Kind == "rename" && strings.HasPrefix(p.Paths[0], "packed-refs.")) {
			// By default at the run ref (left open) and at
			// packed-refs (left committed, with the open ref).
			continue
		}
		reset()
		if !killAt(t, strace, dir, env, p, "run", "commit", id) {
			t.Fatalf("not killed at %s (the point was read from a trace of the whole commit)", p)
		}
		at := "killed at " + p.String()
		checkKilled(t, dir, store, at)
		journal, run, r0 := refs()
		state := listedState(t, dir, id)
		if journal != journal0 && run == "" {
			t.Fatalf("%s: the journal moved without the run's ref", at)
		}
		if r0 != r00 {
			t.Fatalf("%s: run r0 names %s, was %s", at, r0, r00)
		}
		if (state == "committed") != (run != "") {
			t.Fatalf("%s: run %s is %s with run ref %q", at, id, state, run)
		}
		states = append(states, fmt.Sprintf("%s: %s (open ref %d)", p, state, refCount(t, store, "refs/heads/readproof/open/"+id)))
		waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
		var o, e strings.Builder
		cmd := exec.Command("readproof", "run", "commit", id)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &o, &e
		err := cmd.Run()
		switch {
		case state == "committed":
			committed++
			if want := "run already committed as manifest " + run; err == nil || !strings.Contains(e.String(), want) {
				t.Fatalf("%s (committed): the commit again: %v\n%s%s, want a refusal %q", at, err, o.String(), e.String(), want)
			}
			// Killed before the journal moved: the refusal first
			// records the run on the journal, and says so.
			if added := strings.Contains(e.String(), "added the record now"); added != (journal == journal0) {
				t.Fatalf("%s (committed, journal moved %v): the commit again says\n%s", at, journal != journal0, e.String())
			}
		case err != nil:
			t.Fatalf("%s (open): the commit again: %v\n%s", at, err, e.String())
		default:
			_, run, _ = refs()
			if want := strings.ReplaceAll(whole, wholeRun, run); o.String() != want {
				t.Fatalf("%s (open): the commit again says\n%s\nwant (the whole commit's)\n%s", at, o.String(), want)
			}
		}
		checkJournalComplete(t, dir, at+", then the commit again")
		if got := listedState(t, dir, id); got != "committed" {
			t.Fatalf("%s, then the commit again: run %s is %s", at, id, got)
		}
		var st struct {
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "run", "show", id)), &st); err != nil || len(st.Entries) != docs {
			t.Fatalf("%s, then the commit again: run %s has %d entries (%v), want %d", at, id, len(st.Entries), err, docs)
		}
	}
	t.Logf("killed at %d of %d points:\n\t%s", len(states), len(points), strings.Join(states, "\n\t"))
	if committed == 0 || committed == len(states) {
		t.Fatalf("%d of %d kills left the run committed; the kill points miss the ref moves", committed, len(states))
	}
	fsck(t, store)
}

// checkJournalComplete runs verify, which must pass with no warning that
// the journal does not reach a committed run: the command run again after
// a kill recorded it.
func checkJournalComplete(t *testing.T, dir, at string) {
	t.Helper()
	o, e, err := rp(t, dir, "verify")
	if err != nil || strings.Contains(e, "does not reach this manifest") {
		t.Fatalf("%s: verify: %v\n%s%s", at, err, o, e)
	}
}
