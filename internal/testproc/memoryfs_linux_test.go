package testproc

import (
	"os/exec"
	"testing"
)

// TestMemoryFSNoexec: a tmpfs mounted noexec (Docker's /dev/shm) is no
// scratch for the tests, which run the programs they put there; the same
// tmpfs allowing exec is.
func TestMemoryFSNoexec(t *testing.T) {
	dir := SmallTmpfs(t, "1m")
	if !memoryFS(dir) {
		t.Fatalf("%s, a tmpfs allowing exec: memoryFS false", dir)
	}
	if out, err := exec.Command("mount", "-o", "remount,noexec", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot remount a tmpfs noexec: %v: %s", err, out)
	}
	if memoryFS(dir) {
		t.Errorf("%s, a tmpfs mounted noexec: memoryFS true", dir)
	}
}
