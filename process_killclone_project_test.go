package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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
