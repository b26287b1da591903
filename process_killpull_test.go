package main

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledPull kills `readproof pull` of new runs of 34 new documents
// (34 runs, each of a document of its own; by default 3 runs) from a path
// remote at each rename and unlink it makes on a ref, a ref lock or
// packed-refs, read from a trace of the whole pull (killPoints). The pull's
// transaction lists the run refs (loose: refs under refs/tags/ stay
// loose), then the resource refs, then the journal: the 33 new resource
// refs go into packed-refs, and after `readproof gc` the journal and the
// resource the puller had too (document 1, merged), only in packed-refs,
// go with them, in one version renamed into place after the last run ref;
// with loose refs that resource and the journal are loose moves after it.
// The tracking refs are fetched first (`git fetch NAME`, which
// docs/sync.md says is safe), so the pull's one transaction is its
// integration: its own fetch writes the tracking refs into a version of
// packed-refs of its own, and packed-refs.1.lock renamed twice names
// neither rename alone. READPROOF_LONG_TESTS=1 also kills a pull that
// fetches at its first rename of packed-refs.1.lock (strace's when=1: the
// fetch's) and at its first run ref.
//
// After each kill, verify passes, every ref names a complete object graph,
// each pulled run has its ref naming the manifest the whole pull gives it
// or no ref at all, the journal has not moved unless every run ref is in
// (docs/store-format.md: a pull's refs before its journal, so the journal
// never records a run whose ref is missing), and the pull run again
// completes it: it leaves the refs and verify's summary of the whole pull,
// lists as new exactly the runs the kill left without a ref, each with
// the whole pull's line, and, when the kill changed no record, says what
// the whole pull says. By default the store is gc'd (every ref packed)
// and the pull of 3 runs is killed at the second run ref;
// READPROOF_LONG_TESTS=1 pulls 34 runs and kills the pull at every point,
// lock releases included, with packed and with loose refs.
func TestKilledPull(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	// The remote: a store of 34 documents (1 to 34) in runs pN, each of
	// document N, and p01 also of those past the last run (a run costs
	// a process: by default 3 runs, the first of 32 documents).
	const docs = 34
	pulled := testsize.Pick(t, 3, docs)
	remoteDir, remoteURIs, _, _ := killProject(t, docs+1)
	for i := 1; i <= pulled; i++ {
		args := []string{"run", "--id", fmt.Sprintf("p%02d", i), remoteURIs[i]}
		if i == 1 {
			args = append(args, remoteURIs[pulled+1:]...)
		}
		mustRP(t, remoteDir, args...)
	}
	// The puller: run a0 of documents 0 and 1 (the remote has other
	// observations of both: 0 is merged, 1 taken).
	dir, uris, store, env := killProject(t, 2)
	mustRP(t, dir, "run", "--id", "a0", uris[0], uris[1])
	mustRP(t, dir, "remote", "add", "b", filepath.Join(remoteDir, ".readproof"))
	git := func(args ...string) string {
		t.Helper()
		return gitIn(t, store, args...)
	}
	// refs reads the refs a pull adopts: the journal, the run refs, the
	// resource refs.
	refs := func() map[string]string {
		t.Helper()
		m := map[string]string{}
		out := git("for-each-ref", "--format=%(objectname) %(refname)", "refs/heads/main", "refs/tags/readproof/runs/", "refs/heads/readproof/resources/")
		for _, line := range strings.Split(out, "\n") {
			oid, name, _ := strings.Cut(line, " ")
			m[name] = oid
		}
		return m
	}
	reset := func(base string) {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
	}
	pull := func(what string) string {
		t.Helper()
		var stdout, stderr strings.Builder
		cmd := exec.Command("readproof", "pull", "b")
		cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: pull: %v\n%s%s", what, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	const runRef = "refs/tags/readproof/runs/"
	pristine := filepath.Join(t.TempDir(), "pristine")
	copyStore(t, store, pristine)
	kills, partial := 0, 0
	for _, packed := range []bool{true, false} {
		if !testsize.Long() && !packed {
			continue
		}
		name := fmt.Sprintf("packed=%v", packed)
		fresh := pristine
		if packed {
			reset(fresh)
			mustRP(t, dir, "gc")
			if _, err := os.Stat(filepath.Join(store, "refs", "heads", "main")); err == nil {
				t.Fatal("refs/heads/main is loose after gc; the test needs it only in packed-refs")
			}
			fresh = filepath.Join(t.TempDir(), "fresh-packed")
			copyStore(t, store, fresh)
		}
		reset(fresh)
		before := refs()
		git("fetch", "-q", "b")
		base := filepath.Join(t.TempDir(), "fetched")
		copyStore(t, store, base)

		// The whole pull, traced: its kill points, what it says, the refs
		// and the verify summary it leaves.
		points, whole := killPoints(t, strace, dir, env, store, "pull", "b")
		end, summary := refs(), mustRP(t, dir, "verify")
		if n := strings.Count(whole, "\n  new run p"); n != pulled {
			t.Fatalf("%s: the whole pull lists %d new runs, want %d:\n%s", name, n, pulled, whole)
		}
		if len(points) < pulled+1 {
			t.Fatalf("%s: the pull moved refs by %d renames and unlinks (%q), want at least %d", name, len(points), points, pulled+1)
		}
		if !slices.ContainsFunc(points, func(p killPoint) bool { return p.Kind == "rename" && strings.HasPrefix(p.Paths[0], "packed-refs.") }) {
			t.Fatalf("%s: the pull wrote no version of packed-refs (%q); its 33 new resource refs go there", name, points)
		}
		// newRuns is the whole pull's line of each new run.
		newRuns := map[string]string{}
		for _, line := range strings.Split(whole, "\n") {
			if f := strings.Fields(line); len(f) == 5 && f[0] == "new" && f[1] == "run" {
				newRuns[f[2]] = line
			}
		}
		if testsize.Long() {
			// A pull that fetches says what one after `git fetch` says.
			reset(fresh)
			if got := pull(name + ", fetching"); got != whole {
				t.Fatalf("%s: a pull that fetches says\n%s\none after git fetch\n%s", name, got, whole)
			}
		}

		// kill kills the pull at p, from base, checks the store, pulls
		// again and checks that the pull is whole.
		kill := func(base string, p killPoint) (killed bool, what string) {
			t.Helper()
			reset(base)
			killed = killAt(t, strace, dir, env, p, "pull", "b")
			at := fmt.Sprintf("%s, killed at %s", name, p)
			checkKilled(t, dir, store, at)
			s := refs()
			var missing []string
			for ref, oid := range end {
				if !strings.HasPrefix(ref, runRef) {
					continue
				}
				switch got := s[ref]; {
				case got == "":
					missing = append(missing, strings.TrimPrefix(ref, runRef))
				case got != oid:
					t.Fatalf("%s: %s names %s, the whole pull %s", at, ref, got, oid)
				}
			}
			if s["refs/heads/main"] != before["refs/heads/main"] && len(missing) != 0 {
				t.Fatalf("%s: the journal moved with run refs %q missing", at, missing)
			}
			if s[runRef+"a0"] != before[runRef+"a0"] {
				t.Fatalf("%s: run a0 names %s, was %s", at, s[runRef+"a0"], before[runRef+"a0"])
			}
			changed := false
			for ref, oid := range s {
				if before[ref] != oid {
					changed = true
				}
			}
			switch {
			case !killed:
				what = "finished"
			case !changed:
				what = "undone"
			case len(missing) == 0:
				what = "runs in"
			default:
				what = fmt.Sprintf("%d runs in", pulled-len(missing))
				partial++
			}
			// The pull again completes it.
			waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
			again0 := time.Now()
			out := pull(at + " (" + what + "): again")
			if !changed && out != whole {
				t.Fatalf("%s (%s): the pull again says\n%s\nthe whole pull\n%s", at, what, out, whole)
			}
			var again []string
			for _, line := range strings.Split(out, "\n") {
				if f := strings.Fields(line); len(f) == 5 && f[0] == "new" && f[1] == "run" {
					if line != newRuns[f[2]] {
						t.Fatalf("%s (%s): the pull again says %q, the whole pull %q", at, what, line, newRuns[f[2]])
					}
					again = append(again, f[2])
				}
			}
			if strings.Join(again, " ") != strings.Join(slices.Sorted(slices.Values(missing)), " ") {
				t.Fatalf("%s (%s): the pull again lists new runs %q, want the ones the kill left out, %q", at, what, again, slices.Sorted(slices.Values(missing)))
			}
			got := refs()
			for ref, oid := range end {
				if ref != "refs/heads/main" && got[ref] != oid {
					t.Fatalf("%s (%s), then pulled again: %s names %q, the whole pull %q", at, what, ref, got[ref], oid)
				}
			}
			if v := mustRP(t, dir, "verify"); v != summary {
				t.Fatalf("%s (%s), then pulled again: verify says\n%s\nafter the whole pull\n%s", at, what, v, summary)
			}
			// The pull again leaves no lock of its own. The killed
			// one's (stale by now) stay until an object write sweeps
			// them or a writer that needs the lock breaks it: a pull
			// again may write no object (with nothing to do, or when
			// its journal commit is the killed pull's, made in the
			// same second).
			if left := locksSince(t, store, again0); len(left) > 0 {
				t.Fatalf("%s (%s), then pulled again: %q left", at, what, left)
			}
			return killed, what
		}
		var states []string
		for i, p := range points {
			if !testsize.Long() && i != pulled/2 {
				// By default at a run ref half way: a journal moved
				// ahead of the run refs (with packed-refs, as until
				// session 13) shows there too.
				continue
			}
			killed, what := kill(base, p)
			if !killed {
				t.Fatalf("%s: not killed at %s (the point was read from a trace of the whole pull)", name, p)
			}
			kills++
			states = append(states, fmt.Sprintf("%s: %s", p, what))
		}
		if testsize.Long() {
			// A pull that fetches, killed at its fetch's version of
			// packed-refs (the first rename of packed-refs.1.lock) and
			// at its first run ref.
			for _, path := range []string{"packed-refs.1.lock", runRef + "p01.lock"} {
				p := killPoint{Call: "fetching, rename " + path, Kind: "rename", Paths: []string{path},
					inject: []string{"-P", filepath.Join(store, path), "-e", "inject=" + killCalls["rename"] + ":signal=KILL:when=1"}}
				killed, what := kill(fresh, p)
				if !killed {
					t.Fatalf("%s: not killed at %s", name, p)
				}
				kills++
				states = append(states, fmt.Sprintf("%s: %s", p, what))
			}
		}
		t.Logf("%s: killed at %d points (%d traced):\n\t%s", name, len(states), len(points), strings.Join(states, "\n\t"))
	}
	t.Logf("killed pulls %d times; %d left some runs in and others not", kills, partial)
	if partial == 0 {
		t.Fatal("no kill left a pull with some runs in and others not; the test proves nothing")
	}
	fsck(t, store)
}

// locksSince returns the lock files under store (at its top and under
// refs/) modified at or after since.
func locksSince(t testing.TB, store string, since time.Time) []string {
	t.Helper()
	var left []string
	err := filepath.WalkDir(store, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != store && filepath.Dir(path) == store && d.Name() != "refs" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".lock") {
			return nil
		}
		if fi, err := d.Info(); err == nil && !fi.ModTime().Before(since) {
			left = append(left, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return left
}
