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

// TestKilledRenames kills `readproof conflicts rename` at each rename and
// unlink it makes on a ref, a ref lock or packed-refs, for a plain rename,
// one that promotes a waiting conflicting manifest and one of a conflicting
// manifest (--manifest), with loose and with packed refs. The kill points
// are read from a trace of the whole rename, each named by a path that call
// alone works on (killPoints). Until session 13 the test killed at the Nth
// rename or unlink of a thread, N = 1, 2, ...; strace counts those per
// system call and per thread, so it never killed at the journal's move nor,
// with loose refs, at the old name's removal or a conflict ref's. After
// every kill `readproof verify` passes, every ref names a complete object
// graph, and when the kill left the rename undone, recorded but not done,
// half done, or done but for a conflict ref under the old name (the promoted
// manifest's, or with --manifest the renamed one's), running it again
// completes it, says what the whole rename says and leaves no conflict ref
// under r1 (docs/store-format.md, "Writing: crash and concurrency safety").
// The two defects it found: a kill after the new run ref left a ref naming a
// manifest of another run id with no recorded rename (verify reported it
// broken) until the journal's record was published first, and the rename
// again after the last kill refused ("run id already names another
// manifest") until planRename learned to finish it (promotionLeft). By
// default each kind of rename runs with one ref storage (loose, packed,
// loose: both are covered) and is killed at its renames and its unlinks of
// refs, not at its unlinks of lock files (a lock released changes no ref:
// killed there, the refs are as the next point or the end leaves them, with
// the lock left, which TestKilledWriters and TestKilledPackedRun leave to
// the next writer); READPROOF_LONG_TESTS=1 runs all six pairs, kills each at
// every point, and also at the Nth rename or unlink of a thread, N = 1, 2,
// ..., objects included, until it finishes.
func TestKilledRenames(t *testing.T) {
	t.Parallel()
	requireGit(t)
	if testing.Short() {
		t.Skip("slow")
	}
	strace := requireStrace(t)
	dir, uris := project(t, 2, 256)
	store := filepath.Join(dir, ".readproof")
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "READPROOF_STALE_LOCK_AGE="+killStaleAge.String())
	git := func(args ...string) string {
		t.Helper()
		return gitIn(t, store, args...)
	}
	// Run r1 committed twice: m1, then (its ref deleted) m2, with m1 kept
	// as a conflict ref under r1, as a pull leaves a run id with two
	// manifests.
	mustRP(t, dir, append([]string{"run", "--id", "r1"}, uris...)...)
	m1 := git("rev-parse", "refs/tags/readproof/runs/r1")
	plain := filepath.Join(t.TempDir(), "plain")
	copyStore(t, store, plain)
	git("update-ref", "-d", "refs/tags/readproof/runs/r1")
	time.Sleep(10 * time.Millisecond) // another created_at, so another manifest
	mustRP(t, dir, append([]string{"run", "--id", "r1"}, uris[:1]...)...)
	m2 := git("rev-parse", "refs/tags/readproof/runs/r1")
	if m1 == m2 {
		t.Fatal("the second run r1 has the first one's manifest")
	}
	git("update-ref", "refs/tags/readproof/conflicts/runs/r1/"+m1, m1)
	conflicted := filepath.Join(t.TempDir(), "conflicted")
	copyStore(t, store, conflicted)

	cases := []struct {
		name   string
		base   string
		args   []string
		r1, r2 string // the run refs once renamed ("" absent)
	}{
		{"own", plain, []string{"conflicts", "rename", "r1", "r2"}, "", m1},
		{"promote", conflicted, []string{"conflicts", "rename", "r1", "r2"}, m1, m2},
		{"manifest", conflicted, []string{"conflicts", "rename", "r1", "r2", "--manifest", m1}, m2, m1},
	}
	// refs reads the journal's tip, the run refs r1 and r2 ("" absent) and
	// the conflict refs under r1 (r1's or r2's manifest is the rename's
	// end): a rename killed after the old name moved onto the promoted
	// manifest and before that manifest's conflict ref went leaves it,
	// as does one of a conflicting manifest (--manifest) killed after the
	// new name and before the conflict ref's removal.
	type state struct {
		journal, r1, r2 string
		left            []string // conflict refs under r1
	}
	refs := func() (s state) {
		t.Helper()
		out := git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/main",
			"refs/tags/readproof/runs/r1", "refs/tags/readproof/runs/r2", "refs/tags/readproof/conflicts/runs/r1/")
		for _, line := range strings.Split(out, "\n") {
			oid, name, _ := strings.Cut(line, " ")
			switch name {
			case "refs/heads/main":
				s.journal = oid
			case "refs/tags/readproof/runs/r1":
				s.r1 = oid
			case "refs/tags/readproof/runs/r2":
				s.r2 = oid
			default:
				s.left = append(s.left, name)
			}
		}
		return s
	}
	// rename runs the case's command unkilled and returns its stdout.
	rename := func(c string, args []string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		cmd := exec.Command("readproof", args...)
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v\n%s%s", c, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	reset := func(base string) {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
	}
	kills, half, left1 := 0, 0, 0
	wholes := map[string]string{} // by case: what the whole rename says
	for i, c := range cases {
		for _, packed := range []bool{false, true} {
			if !testsize.Long() && packed != (i%2 == 1) {
				continue
			}
			name := fmt.Sprintf("%s packed=%v", c.name, packed)
			base := c.base
			if packed {
				base = filepath.Join(t.TempDir(), "packed")
				copyStore(t, c.base, base)
				gitIn(t, base, "pack-refs", "--all", "--prune")
			}
			reset(base)
			before := refs()
			done := func(s state) bool { return s.r1 == c.r1 && s.r2 == c.r2 }
			// check checks the rename's end: the run refs renamed, no
			// conflict ref left beside r1, no conflict listed.
			check := func(at string, s state) {
				t.Helper()
				if !done(s) || len(s.left) != 0 {
					t.Fatalf("%s, %s: r1 %q and r2 %q (conflict ref %q left), want %q and %q (none left)", name, at, s.r1, s.r2, s.left, c.r1, c.r2)
				}
				var list struct {
					Runs []json.RawMessage `json:"runs"`
				}
				if err := json.Unmarshal([]byte(mustRP(t, dir, "--json", "conflicts", "list")), &list); err != nil || len(list.Runs) != 0 {
					t.Fatalf("%s, %s: conflicts left: %s (%v)", name, at, list.Runs, err)
				}
			}
			// The whole rename, traced: its kill points and what it says,
			// which the rename again after a kill says too.
			points, whole := killPoints(t, strace, dir, env, store, c.args...)
			check("unkilled", refs())
			if w, ok := wholes[c.name]; ok && w != whole {
				t.Fatalf("%s: the whole rename says\n%s\nwith the other ref storage\n%s", name, whole, w)
			}
			wholes[c.name] = whole
			if len(points) < 3 {
				t.Fatalf("%s: the rename moved refs by %d renames and unlinks (%q), want at least 3", name, len(points), points)
			}
			// kill kills the rename at p, checks the store, completes the
			// rename when the kill left it undone, recorded but not done,
			// half done or with a conflict ref under r1, and says which of
			// these it was.
			kill := func(p killPoint) (killed bool, what string) {
				t.Helper()
				reset(base)
				killed = killAt(t, strace, dir, env, p, c.args...)
				at := "killed at " + p.String()
				checkKilled(t, dir, store, name+", "+at)
				s := refs()
				switch {
				case !killed:
					what = "finished"
				case done(s) && len(s.left) == 1 && s.left[0] == "refs/tags/readproof/conflicts/runs/r1/"+s.r1:
					what, left1 = "promoted manifest's conflict ref left", left1+1
				case done(s) && len(s.left) != 0:
					what = "conflict ref left"
				case done(s):
					what = "done"
				case s.r1 != before.r1 || s.r2 != before.r2:
					what, half = "half done", half+1
				case s.journal != before.journal:
					what = "recorded, not done"
				default:
					what = "undone"
				}
				if killed && (!done(s) || len(s.left) != 0) {
					// the same command completes it and says what the
					// whole rename says
					waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
					if out := rename(fmt.Sprintf("%s, %s (%s: r1 %q, r2 %q, left %q): the rename again", name, at, what, s.r1, s.r2, s.left), c.args); out != whole {
						t.Fatalf("%s, %s: the rename again says\n%s\nthe whole rename\n%s", name, at, out, whole)
					}
					mustRP(t, dir, "verify")
					s = refs()
				}
				check(at, s)
				return killed, what
			}
			var states []string
			for _, p := range points {
				if !testsize.Long() && p.Kind == "unlink" && strings.HasSuffix(p.Paths[0], ".lock") {
					// A lock released: it changes no ref (by default
					// the kills are at the moves of refs alone).
					continue
				}
				killed, what := kill(p)
				if !killed {
					t.Fatalf("%s: not killed at %s (the point was read from a trace of the whole rename)", name, p)
				}
				kills++
				states = append(states, fmt.Sprintf("%s: %s", p, what))
			}
			t.Logf("%s: killed at %d of %d points:\n\t%s", name, len(states), len(points), strings.Join(states, "\n\t"))
			if testsize.Long() {
				// Also at the Nth rename or unlink of a thread (objects
				// included), N = 1, 2, ... until the rename finishes.
				states = states[:0]
				for n := 1; ; n++ {
					killed, what := kill(killNth(n))
					states = append(states, fmt.Sprintf("N=%d: %s", n, what))
					if !killed {
						break
					}
					kills++
				}
				t.Logf("%s: killed at the Nth rename or unlink of a thread: %s", name, strings.Join(states, ", "))
			}
		}
	}
	t.Logf("killed renames %d times; %d left them half done, %d a conflict ref beside r1", kills, half, left1)
	if half == 0 {
		t.Fatal("no kill left a rename half done; the test proves nothing")
	}
	if left1 == 0 {
		t.Fatal("no kill left the promoted manifest's conflict ref; the rename again after it is untested")
	}
	fsck(t, store)
}

// copyStore copies the store directory from to a new directory to (cp -a:
// modes kept).
func copyStore(t testing.TB, from, to string) {
	t.Helper()
	if out, err := exec.Command("cp", "-a", from, to).CombinedOutput(); err != nil {
		t.Fatalf("cp -a %s %s: %v\n%s", from, to, err, out)
	}
}
