package testproc

import (
	"os"
	"os/exec"
)

// SkipTB is what SmallTmpfs needs of a *testing.T (this package does not
// link the testing package).
type SkipTB interface {
	Helper()
	TempDir() string
	Skip(args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
}

// SmallTmpfs mounts a tmpfs of size (mount's size= option: "1m") on a new
// temporary directory for the rest of the test and returns the directory,
// to fill a disk on purpose. It skips the test where that cannot be done:
// not root, or no mount allowed (a container).
func SmallTmpfs(t SkipTB, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v: %s", err, out)
	}
	t.Cleanup(func() { exec.Command("umount", dir).Run() })
	return dir
}
