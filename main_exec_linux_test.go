package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// stNoexec is ST_NOEXEC, the statfs flag of a file system mounted noexec
// (the value of MS_NOEXEC, which the syscall package names).
const stNoexec = syscall.MS_NOEXEC

// execAllowed reports whether the file system holding dir allows running a
// program from it: it exists and is not mounted noexec.
func execAllowed(dir string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return false
	}
	return st.Flags&stNoexec == 0
}

// TestSandboxBaseSkipsNoexec: a permission test's sandbox is not made on
// a file system mounted noexec (Docker's /dev/shm), where running
// bin/readproof from it fails, but in the next directory given.
func TestSandboxBaseSkipsNoexec(t *testing.T) {
	noexec := testproc.SmallTmpfs(t, "1m")
	if out, err := exec.Command("mount", "-o", "remount,noexec", noexec).CombinedOutput(); err != nil {
		t.Skipf("cannot remount a tmpfs noexec: %v: %s", err, out)
	}
	if err := os.Chmod(noexec, 0o755); err != nil {
		t.Fatal(err)
	}
	// what the sandbox holds does not run there
	prog := filepath.Join(noexec, "prog")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := exec.Command(prog).Run(); err == nil {
		t.Fatalf("%s ran from a file system mounted noexec: the test proves nothing", prog)
	}
	other := t.TempDir()
	if execAllowed(noexec) || !execAllowed(other) {
		t.Fatalf("execAllowed: %s (noexec) %v, %s %v", noexec, execAllowed(noexec), other, execAllowed(other))
	}
	if got := sandboxBase(false, []string{noexec, other}); got != other {
		t.Errorf("sandboxBase = %s, want %s: %s is mounted noexec", got, other, noexec)
	}
	if got := sandboxBase(false, []string{noexec}); got != "" {
		t.Errorf("sandboxBase of a noexec directory alone = %s, want none", got)
	}
}
