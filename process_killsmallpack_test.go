package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testsize"
)

// TestKilledSmallPackPass kills `readproof run`, at a write that makes the
// store's third small pack with gc.autoPackLimit at 2, at each unlink by
// which its maintenance pass removes the small packs of the earlier runs
// (each pack before its index; with READPROOF_LONG_TESTS=1 also the
// .rev and .bitmap it might have).
// The ref kill points (killPoints) leave maintenance out, and its pack's
// name changes with every run; the earlier packs' names do not. After
// each kill, every ref names a complete object graph, verify passes, the
// three runs are listed, and a further run and verify pass: a pass killed
// between a pack's two unlinks left an index whose pack was gone, and
// every later process reported the objects in it missing.
func TestKilledSmallPackPass(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, store, env := killProject(t, 4)
	if out, err := exec.Command("git", "--git-dir", store, "config", "gc.autoPackLimit", "2").CombinedOutput(); err != nil {
		t.Fatalf("git config: %v\n%s", err, out)
	}
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	mustRP(t, dir, "run", "--id", "r1", uris[1])
	earlier, err := filepath.Glob(filepath.Join(store, "objects", "pack", "pack-*.pack"))
	if err != nil || len(earlier) != 2 {
		t.Fatalf("packs after two runs: %v (%v); want two small packs", earlier, err)
	}
	base := filepath.Join(t.TempDir(), "base")
	copyStore(t, store, base)
	args := []string{"run", "--id", "r2", uris[2]}

	// The pass's unlinks of the earlier packs, from a trace of the whole
	// command (not killPoints: these are maintenance's, under objects/).
	log := filepath.Join(t.TempDir(), "strace.log")
	cmd := exec.Command(strace, append([]string{"-f", "-o", log, "-e", "trace=unlink,unlinkat", "readproof"}, args...)...)
	cmd.Dir, cmd.Env = dir, env
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("readproof %s, traced: %v\n%s", strings.Join(args, " "), err, out)
	}
	trace, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	var points []killPoint
	seen := map[string]bool{}
	for _, m := range straceCalls(string(trace), killCalls["unlink"]) {
		p := killPathRE.FindStringSubmatch(m[3])
		if p == nil || seen[p[1]] {
			continue // os.Remove unlinks twice a file that is not there
		}
		seen[p[1]] = true
		if !testsize.Long() && !strings.HasSuffix(p[1], ".pack") && !strings.HasSuffix(p[1], ".idx") {
			continue // the .rev and .bitmap a small pack does not have
		}
		for _, e := range earlier {
			if strings.HasPrefix(p[1], strings.TrimSuffix(e, ".pack")+".") {
				rel, _ := filepath.Rel(store, p[1])
				points = append(points, killPoint{Call: "unlink " + rel, Kind: "unlink",
					inject: []string{"-P", p[1], "-e", "inject=" + killCalls["unlink"] + ":signal=KILL:when=1"}})
			}
		}
	}
	if len(points) < 4 {
		t.Fatalf("the pass removed the earlier packs by %d unlinks (%q), want at least their packs and indexes", len(points), points)
	}
	for _, p := range points {
		if err := os.RemoveAll(store); err != nil {
			t.Fatal(err)
		}
		copyStore(t, base, store)
		if !killAt(t, strace, dir, env, p, args...) {
			t.Fatalf("killed at %s: the run was not killed", p)
		}
		checkKilled(t, dir, store, "killed at "+p.String())
		listed := map[string]bool{}
		for _, r := range runs(t, dir) {
			listed[r.RunID] = !r.Open && r.Manifest != ""
		}
		if !listed["r0"] || !listed["r1"] || !listed["r2"] {
			t.Fatalf("killed at %s: runs committed %v; want r0, r1 and r2", p, listed)
		}
		rpWith(t, dir, env, "run", "--id", "r3", uris[3])
		checkKilled(t, dir, store, "killed at "+p.String()+", then a run")
	}
	t.Logf("killed the pass at %q", points)
}
