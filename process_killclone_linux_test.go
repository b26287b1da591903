//go:build linux

package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// TestKilledCloneOfProjectLeavesNothing: `readproof clone` of a project's
// repository (no readproof store: refused) killed at the moment the
// project's objects would be on disk beside the target (a pack, or git's
// temporary pack, in the clone's staging directory) finds none: the
// refusal comes before anything of the source is copied, so a clone killed
// at any point leaves nothing of the project there. Several clones are
// watched; each ends refused, or is killed at the first sight of a pack.
func TestKilledCloneOfProjectLeavesNothing(t *testing.T) {
	t.Parallel()
	requireGit(t)
	base := t.TempDir()
	proj := filepath.Join(base, "proj.git")
	gitIn(t, proj, "init", "-q", "--bare")
	big := make([]byte, 4<<20)
	rand.NewChaCha8([32]byte{2}).Read(big)
	blob := filepath.Join(base, "big")
	if err := os.WriteFile(blob, big, 0o644); err != nil {
		t.Fatal(err)
	}
	id := gitIn(t, proj, "hash-object", "-w", blob)
	// refs enough that listing them takes a while
	for i := range 2000 {
		if err := os.WriteFile(filepath.Join(proj, "refs", "tags", fmt.Sprintf("v%d", i)), []byte(id+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "READPROOF_STALE_LOCK_AGE="+killStaleAge.String())
	for try := range 3 {
		into := t.TempDir()
		target := filepath.Join(into, "clone")
		staging := filepath.Join(into, ".clone.clone")
		cmd := exec.Command("readproof", "clone", proj, target)
		var stderr testproc.SyncBuffer
		cmd.Dir, cmd.Env, cmd.Stderr = into, env, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		var err error
		seen := ""
	watch:
		for {
			select {
			case err = <-exited:
				break watch
			default:
			}
			if packs, _ := filepath.Glob(filepath.Join(staging, "objects", "pack", "*")); len(packs) > 0 {
				seen = packs[0]
				cmd.Process.Kill()
				err = <-exited
				break watch
			}
			time.Sleep(50 * time.Microsecond)
		}
		if seen != "" {
			left, _ := filepath.Glob(filepath.Join(staging, "objects", "pack", "*"))
			t.Fatalf("try %d: the clone of a project's repository wrote %s before refusing it; killed then, it left %v beside the target", try, seen, left)
		}
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "not a readproof store") {
			t.Fatalf("try %d: clone of a project: %v, want it refused (exit 1, not a readproof store)\n%s", try, err, stderr.String())
		}
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("try %d: clone died of %v", try, ws.Signal())
		}
		if _, serr := os.Lstat(staging); !os.IsNotExist(serr) {
			t.Fatalf("try %d: a refused clone left %s (%v)", try, staging, serr)
		}
	}
}

// TestKilledCloneStopsItsCopy: `readproof clone` of a store of one pack
// (the copy hands it to git index-pack), killed (SIGKILL) while index-pack
// runs, leaves no git behind that goes on copying: index-pack ends with
// it, and no whole pack of the source appears in the staging directory
// after the clone is dead.
func TestKilledCloneStopsItsCopy(t *testing.T) {
	t.Parallel()
	requireGit(t)
	_, _, src, env := killProject(t, 1)
	big := make([]byte, 24<<20)
	rand.NewChaCha8([32]byte{3}).Read(big)
	blob := filepath.Join(t.TempDir(), "big")
	if err := os.WriteFile(blob, big, 0o644); err != nil {
		t.Fatal(err)
	}
	id := gitIn(t, src, "-c", "core.looseCompression=0", "hash-object", "-w", blob)
	gitIn(t, src, "update-ref", "refs/junk/big", id)
	gitIn(t, src, "-c", "pack.compression=0", "repack", "-adq")
	gitIn(t, src, "update-ref", "-d", "refs/junk/big")
	gitIn(t, src, "prune-packed")
	if packs, _ := filepath.Glob(filepath.Join(src, "objects", "pack", "*.pack")); len(packs) != 1 {
		t.Fatalf("source packs %v, want one", packs)
	}
	for try := range 5 {
		into := t.TempDir()
		staging := filepath.Join(into, ".clone.clone")
		cmd := exec.Command("readproof", "clone", src, filepath.Join(into, "clone"))
		cmd.Dir, cmd.Env = into, env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		pid := cmd.Process.Pid
		child := 0
		deadline := time.Now().Add(5 * time.Second)
		for child == 0 && time.Now().Before(deadline) {
			tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
			for _, f := range tasks {
				b, _ := os.ReadFile(f)
				for _, c := range strings.Fields(string(b)) {
					line, _ := os.ReadFile("/proc/" + c + "/cmdline")
					if strings.Contains(string(line), "index-pack") {
						child, _ = strconv.Atoi(c)
					}
				}
			}
			if child == 0 {
				time.Sleep(100 * time.Microsecond)
			}
		}
		done, _ := filepath.Glob(filepath.Join(staging, "objects", "pack", "pack-*.pack"))
		cmd.Process.Kill()
		cmd.Wait()
		if child == 0 || len(done) > 0 {
			continue // the clone got past its copy first: try again
		}
		// the orphan, if any, is reparented and reaped elsewhere: wait
		// for its pid to go
		gone := false
		for end := time.Now().Add(5 * time.Second); time.Now().Before(end); time.Sleep(time.Millisecond) {
			// gone, or a zombie (the test binary is a subreaper: testproc)
			stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
			if _, after, ok := strings.Cut(string(stat), ") "); err != nil || (ok && strings.HasPrefix(after, "Z")) {
				gone = true
				break
			}
		}
		if !gone {
			syscall.Kill(child, syscall.SIGKILL)
			t.Fatalf("try %d: git index-pack (pid %d) still ran 5 s after its clone was killed", try, child)
		}
		if packs, _ := filepath.Glob(filepath.Join(staging, "objects", "pack", "pack-*.pack")); len(packs) > 0 {
			t.Fatalf("try %d: git index-pack went on copying after its clone was killed: it wrote %v", try, packs)
		}
		return
	}
	t.Skip("no clone was killed while index-pack ran")
}
