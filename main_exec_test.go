package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestExecReadOnlyStore is issue 13.7 on a store whose files the user may
// not write (permission bits): `readproof exec` fails before it runs the
// command, so the command's side effect never happens. Permission bits do
// not stop root, so as root the check runs as the user nobody (setpriv).
func TestExecReadOnlyStore(t *testing.T) {
	t.Parallel()
	requireGit(t)
	asUser, root, bin := permissionSandbox(t, "readproof-ro-")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "config"))
	run := func(user bool, args ...string) (string, error) {
		t.Helper()
		argv := append([]string{bin}, args...)
		if user {
			argv = append(append([]string(nil), asUser...), argv...)
		}
		out, err := runNotBusy(argv, proj, env)
		return string(out), err
	}
	for _, args := range [][]string{{"init"}, {"receipts", "key", "init"}} {
		if out, err := run(false, args...); err != nil {
			t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if os.Geteuid() == 0 {
		// not the binary: a hard link shares its owner with the binary
		// every other test runs; nobody only needs to read and run it
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
			if p == bin {
				return nil
			}
			return os.Lchown(p, 65534, 65534)
		})
	}
	store := filepath.Join(proj, ".readproof")
	filepath.Walk(store, func(p string, fi os.FileInfo, _ error) error {
		return os.Chmod(p, fi.Mode().Perm()&^0o222)
	})

	marker := filepath.Join(root, "ran")
	out, err := run(true, "exec", "--session", "s1", "--", "touch", marker)
	var ee *exec.ExitError
	if err == nil || !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("exec on a read-only store: %v, want exit 1\n%s", err, out)
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the command ran although its receipt could not be stored\n%s", out)
	}
	if !strings.Contains(out, "the command was not run: receipts could not be stored: the store cannot be written") {
		t.Errorf("unexpected message:\n%s", out)
	}
}

// linkOrCopy makes to a hard link to from, the test binary (tens of MB,
// which a copy writes again and each process started from the copy reads
// into the page cache again), or a copy with mode where a link cannot be
// made (another file system) or the binary's mode lacks bits of mode.
func linkOrCopy(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(from, to); err == nil {
		if st, err := os.Stat(to); err == nil && st.Mode().Perm()&mode == mode {
			return
		}
		os.Remove(to) // the binary's own mode is narrower than mode
	}
	copyFile(t, from, to, mode)
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// permissionSandbox prepares a test of permission bits: a world-searchable
// directory root (removed at the end, whatever modes the test left) holding
// bin/readproof, a link to (or else a copy of) the binary under test, so
// that another user can reach both. Permission bits do not stop root, so as
// root asUser is the command prefix that runs a command as the user nobody
// (setpriv); otherwise it is empty. It skips the test as root without
// setpriv.
func permissionSandbox(t *testing.T, prefix string) (asUser []string, root, bin string) {
	t.Helper()
	if os.Geteuid() == 0 {
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			t.Skip("running as root without setpriv: permission bits cannot be tested")
		}
		asUser = []string{setpriv, "--reuid=65534", "--regid=65534", "--clear-groups"}
	}
	base := sandboxBase(asUser != nil, []string{os.TempDir(), "/tmp", "/dev/shm"})
	if base == "" {
		t.Skipf("none of %s, /tmp and /dev/shm both allows running a program from it and can be reached by the user nobody: set TMPDIR to a directory that does", os.TempDir())
	}
	root, err := os.MkdirTemp(base, prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error { os.Chmod(p, 0o755); return nil })
		os.RemoveAll(root)
	})
	if err := os.Chmod(root, 0o755); err != nil {
		t.Fatal(err)
	}
	bin = filepath.Join(root, "bin", "readproof")
	self, err := exec.LookPath("readproof")
	if err != nil {
		t.Fatal(err)
	}
	linkOrCopy(t, self, bin, 0o755)
	return asUser, root, bin
}

// sandboxBase is the first of dirs where a permission test's sandbox can
// be made: a file system that allows running the programs the test puts
// there (bin/readproof; Docker mounts /dev/shm noexec), and, when the test
// runs as nobody (asNobody), a directory nobody can reach: a TMPDIR below a
// directory only its owner may search (mktemp -d makes one) would fail
// every command with "permission denied" on the project's first file. ""
// when none is.
func sandboxBase(asNobody bool, dirs []string) string {
	for _, dir := range dirs {
		if execAllowed(dir) && (!asNobody || worldSearchable(dir)) {
			return dir
		}
	}
	return ""
}

// worldSearchable reports whether dir and each directory above it may be
// searched by any user (the x bit for others), so that another user can
// reach what is made in dir: through the path as given, and through the
// one its symlinks lead to (a TMPDIR that is a link into a private
// directory reaches nothing for another user).
func worldSearchable(dir string) bool {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	for _, dir := range []string{dir, real} {
		for {
			fi, err := os.Stat(dir)
			if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o001 == 0 {
				return false
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	return true
}

// TestWorldSearchable: the directory of a permission test is one any user
// can reach, whether it is named directly or through a symlink whose
// target lies below a private directory.
func TestWorldSearchable(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no search bit for others on Windows")
	}
	base, err := os.MkdirTemp("", "readproof-search-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(base, "private"), 0o755); os.RemoveAll(base) })
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if !worldSearchable(base) {
		t.Skipf("%s is not reachable by every user: set TMPDIR to a directory every user may search", os.TempDir())
	}
	private := filepath.Join(base, "private")
	tmp := filepath.Join(private, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(tmp, 0o1777); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(base, "tmp")
	if err := os.Symlink(tmp, link); err != nil {
		t.Skip(err)
	}
	for _, dir := range []string{tmp, link} {
		if worldSearchable(dir) {
			t.Errorf("worldSearchable(%s) = true, but %s is private (0700)", dir, private)
		}
	}
	if !worldSearchable(filepath.Join(base, ".")) {
		t.Errorf("worldSearchable(%s) = false for a directory every user may search", base)
	}
}
