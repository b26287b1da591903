package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
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
// Each kill point is named by the path its system call works on (strace
// -P), read from a trace of the whole command: strace's Nth-call counter
// (inject when=N) counts per thread, and Go moves a goroutine between
// threads, so the Nth call is not the same call from one run to the next.
// Object files (tmp_obj_*, tmp_pack_* and tmp_idx_*, with random names)
// are written before any ref moves and are not kill points here
// (TestKilledWriters kills writers at random moments).
func TestKilledPackedRun(t *testing.T) {
	t.Parallel()
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace (it delivers the SIGKILL at each system call)")
	}
	if out, err := exec.Command(strace, "-f", "-o", os.DevNull, "true").CombinedOutput(); err != nil {
		t.Skipf("strace cannot trace here: %v\n%s", err, out)
	}
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
	calls := "trace=rename,renameat,renameat2,unlink,unlinkat"

	// The whole command, traced: its renames and unlinks, by path.
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, append([]string{"-f", "-o", log, "-e", calls, "readproof"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("traced run: %v\n%s", err, out)
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var points []string
	seen := map[string]bool{}
	callRE := regexp.MustCompile(`\b(?:rename|renameat2?|unlink|unlinkat)\((?:AT_FDCWD, )?"([^"]+)"`)
	for _, m := range callRE.FindAllStringSubmatch(string(trace), -1) {
		p := m[1]
		rel, err := filepath.Rel(store, p)
		if err != nil || strings.HasPrefix(rel, "..") || strings.HasPrefix(rel, "objects") || seen[p] {
			continue
		}
		seen[p] = true
		points = append(points, p)
	}
	if len(points) < 3 {
		t.Fatalf("the run moved refs by %d renames and unlinks (%q), want at least 3:\n%s", len(points), points, trace)
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
	// kill runs the command with strace's injection inject (the system
	// calls it kills at, named by name), checks the store and reports
	// whether the command was killed and whether that left the run
	// unrecorded.
	kill := func(name string, inject ...string) (killed, undone bool) {
		t.Helper()
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
		cmd := exec.Command(strace, append(append([]string{"-f", "-o", os.DevNull, "-e", calls}, inject...), append([]string{"readproof"}, args...)...)...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
		killed = (ws.Signaled() && ws.Signal() == syscall.SIGKILL) || ws.ExitStatus() == 128+int(syscall.SIGKILL)
		if err != nil && !killed {
			t.Fatalf("killed at %s: %v\n%s", name, err, out)
		}
		checkRefs(t, store)
		if o, e, err := rp(t, dir, "verify"); err != nil {
			t.Fatalf("killed at %s: verify: %v\n%s%s", name, err, o, e)
		}
		if runState() {
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
	var names []string
	for _, p := range points {
		rel, _ := filepath.Rel(store, p)
		names = append(names, rel)
		killed, u := kill(rel, "-P", p, "-e", "inject=rename,renameat,renameat2,unlink,unlinkat:signal=KILL:when=1")
		if !killed {
			t.Fatalf("killed at %s: the run was not killed", rel)
		}
		if u {
			undone++
		}
	}
	t.Logf("killed the run at each rename or unlink of %q; %d left it unrecorded", names, undone)
	if undone == 0 || undone == len(points) {
		t.Fatalf("%d of %d kills left the run unrecorded; the kill points miss the ref moves", undone, len(points))
	}
	if testsize.Long() {
		// Also at the Nth rename or unlink of a thread (objects
		// included), N = 1, 2, ... until the run completes.
		n := 1
		for ; ; n++ {
			if killed, _ := kill(fmt.Sprintf("call %d", n), "-e", fmt.Sprintf("inject=rename,renameat,renameat2,unlink,unlinkat:signal=KILL:when=%d", n)); !killed {
				break
			}
		}
		t.Logf("killed the run at the Nth rename or unlink of a thread, N = 1 to %d", n-1)
	}
	fsck(t, store)
}
