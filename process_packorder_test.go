package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledPackedRun kills `readproof run --id` of a run of many new
// documents after `readproof gc` at each rename and unlink it makes on a
// ref, a ref lock or packed-refs. After gc every ref is packed: the journal
// (refs/heads/main) has no loose file, and a transaction that sets 32 refs
// or more writes the new resource refs into packed-refs while the run's
// ref (refs/tags/...) stays loose. Until session 13 packed-refs was renamed
// once, where the first resource ref is listed, and carried the journal's
// move with it: killed before the run ref's rename, the store held a
// journal entry whose run ref was missing, which verify reports as broken.
// After each kill, verify passes, every ref names a complete object graph,
// the run is either committed with its ref or not recorded at all (and
// then recorded by running it again, which leaves no lock or temporary
// file behind), and the open run and the earlier committed run are intact.
//
// Each kill point is named by a path its system call alone works on
// (strace -P), read from a trace of the whole command (killPoints):
// strace's Nth-call counter (inject when=N) counts per thread, and Go moves
// a goroutine between threads, so the Nth call is not the same call from
// one run to the next.
// Object files (tmp_obj_*, tmp_pack_* and tmp_idx_*, with random names)
// are written before any ref moves and are not kill points here
// (TestKilledWriters kills writers at random moments).
func TestKilledPackedRun(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	docs := testsize.Pick(t, 34, 300) // 32 or more new resource refs
	dir, uris, store, env := killProject(t, docs+2)
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	mustRP(t, dir, "run", "start", "open1")
	mustRP(t, dir, "run", "mount", "open1", uris[1])
	mustRP(t, dir, "gc")
	if _, err := os.Stat(filepath.Join(store, "refs", "heads", "main")); err == nil {
		t.Fatal("refs/heads/main is loose after gc; the test needs it only in packed-refs")
	}
	base := filepath.Join(t.TempDir(), "base")
	copyStore(t, store, base)
	args := append([]string{"run", "--id", "big"}, uris[2:]...)

	// The whole command, traced: its renames and unlinks of refs.
	points, _ := killPoints(t, strace, dir, env, store, args...)
	if len(points) < 3 {
		t.Fatalf("the run moved refs by %d renames and unlinks (%q), want at least 3", len(points), points)
	}

	runState := func() (committed bool) {
		t.Helper()
		var open1, r0 bool
		for _, r := range runs(t, dir) {
			switch {
			case r.RunID == "big" && !r.Open && r.Manifest != "":
				committed = true
			case r.RunID == "big":
				t.Fatalf("run big is listed but not committed: %+v", r)
			case r.RunID == "open1" && r.Open:
				open1 = true
			case r.RunID == "r0" && !r.Open:
				r0 = true
			}
		}
		if !open1 || !r0 {
			t.Fatalf("open run open1 listed %v, committed run r0 listed %v; want both", open1, r0)
		}
		if got := refCount(t, store, "refs/tags/readproof/runs/big"); got != map[bool]int{true: 1}[committed] {
			t.Fatalf("run big committed %v with %d run refs", committed, got)
		}
		return committed
	}
	// kill runs the command killed at p, checks the store and reports
	// whether the command was killed and whether that left the run
	// unrecorded.
	kill := func(p killPoint) (killed, undone bool) {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
		killed = killAt(t, strace, dir, env, p, args...)
		name := p.String()
		checkKilled(t, dir, store, "killed at "+name)
		if runState() {
			// Committed: the same run again refuses it, having first
			// recorded it on the journal if the kill came before the
			// journal moved (and says so).
			_, ve, _ := rp(t, dir, "verify")
			unrecorded := strings.Contains(ve, "does not reach this manifest")
			waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
			cmd := exec.Command("readproof", args...)
			var o, e strings.Builder
			cmd.Dir, cmd.Env, cmd.Stdout, cmd.Stderr = dir, env, &o, &e
			err := cmd.Run()
			if err == nil || !strings.Contains(e.String(), "run already committed as manifest") || strings.Contains(e.String(), "added the record now") != unrecorded {
				t.Fatalf("killed at %s (committed, recorded on the journal %v): the run again: %v\n%s%s", name, !unrecorded, err, o.String(), e.String())
			}
			checkJournalComplete(t, dir, "killed at "+name+", then the run again")
			return killed, false
		}
		// Not recorded: the same run again records it, and leaves no
		// lock or temporary file (what the killed run left is stale).
		waitLocksStale(t, store, killStaleAge+50*time.Millisecond)
		rpWith(t, dir, env, args...)
		mustRP(t, dir, "verify")
		if !runState() {
			t.Fatalf("killed at %s: run big is not committed after running it again", name)
		}
		if left, _ := filepath.Glob(filepath.Join(store, "*.lock")); len(left) > 0 {
			t.Fatalf("killed at %s, then run again: %q left", name, left)
		}
		return killed, true
	}
	undone := 0
	for _, p := range points {
		killed, u := kill(p)
		if !killed {
			t.Fatalf("killed at %s: the run was not killed", p)
		}
		if u {
			undone++
		}
	}
	t.Logf("killed the run at each rename or unlink of %q; %d left it unrecorded", points, undone)
	if undone == 0 || undone == len(points) {
		t.Fatalf("%d of %d kills left the run unrecorded; the kill points miss the ref moves", undone, len(points))
	}
	if testsize.Long() {
		// Also at the Nth rename or unlink of a thread (objects
		// included), N = 1, 2, ... until the run completes.
		n := 1
		for ; ; n++ {
			if killed, _ := kill(killNth(n)); !killed {
				break
			}
		}
		t.Logf("killed the run at the Nth rename or unlink of a thread, N = 1 to %d", n-1)
	}
	fsck(t, store)
}
