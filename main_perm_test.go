package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStorePermissionMessages: a store the user may not write, or not
// read, is named as such, with a hint about its permissions. A write to a
// read-only store said "the file system failed (dmesg may say why)", and a
// store the user may not read was "no readproof store" with the hint to run
// `readproof init`, which then failed on it. Permission bits do not stop
// root, so as root the commands run as the user nobody (setpriv), as in
// TestExecReadOnlyStore.
func TestStorePermissionMessages(t *testing.T) {
	t.Parallel()
	requireGit(t)
	asUser, root, bin := permissionSandbox(t, "readproof-perm-")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "policies", "refunds.md"), []byte("Products can be refunded within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	run := permRunner(t, asUser, root, bin, proj)
	uri := "readproof://demo/policies/refunds"
	if out, code := run(false, "resource", "add", uri, "--source-type", "filesystem", "--path", "policies/refunds.md"); code != 0 {
		t.Fatalf("resource add: exit %d\n%s", code, out)
	}
	if os.Geteuid() == 0 {
		filepath.Walk(root, func(p string, _ os.FileInfo, _ error) error {
			if p == bin {
				return nil
			}
			return os.Lchown(p, 65534, 65534)
		})
	}
	store := filepath.Join(proj, ".readproof")
	chmodAll := func(clear os.FileMode) {
		filepath.Walk(store, func(p string, fi os.FileInfo, _ error) error {
			return os.Chmod(p, fi.Mode().Perm()&^clear)
		})
	}

	// a read-only store: a write names the permission problem
	chmodAll(0o222)
	out, code := run(true, "run", "--id", "r1", uri)
	if code != 1 || !strings.Contains(out, "permission denied") {
		t.Errorf("run --id on a read-only store: exit %d, want 1 and \"permission denied\"\n%s", code, out)
	}
	if h := hintLine(out); strings.Contains(h, "dmesg") || !strings.Contains(h, "permission") {
		t.Errorf("run --id on a read-only store: the hint should be about the store's permissions, not the file system:\n%s", out)
	}

	// a store the user may not read at all
	if os.Geteuid() == 0 {
		if err := os.Chown(store, 0, 0); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(store, 0o700); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(store, 0); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"run", "list"}, {"run", "--id", "r2", uri}, {"verify"}} {
		out, code := run(true, args...)
		if code == 0 || code == 2 || strings.Contains(out, "no readproof store") || !strings.Contains(out, "permission denied") || !strings.Contains(out, store) {
			t.Errorf("readproof %s on a store the user may not read: exit %d, want a failure naming the store and \"permission denied\"\n%s", strings.Join(args, " "), code, out)
		}
		if h := hintLine(out); strings.Contains(h, "readproof init") || !strings.Contains(h, "permission") {
			t.Errorf("readproof %s on a store the user may not read: the hint should be about its permissions, not init:\n%s", strings.Join(args, " "), out)
		}
	}
}

// runNotBusy runs argv in dir with env and returns its combined output,
// trying again while the binary is busy: a test that copied it into its
// sandbox may have had the file open for writing when another test forked,
// and the child holds that descriptor until it execs (golang.org/issue/22315).
// exec fails then with ETXTBSY, or, through setpriv (the commands run as
// another user), setpriv exits 126 saying "Text file busy".
func runNotBusy(argv []string, dir string, env []string) ([]byte, error) {
	for try := 0; ; try++ {
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		busy := errors.Is(err, syscall.ETXTBSY) ||
			errors.As(err, &ee) && ee.ExitCode() == 126 && strings.Contains(string(out), "Text file busy")
		if !busy || try >= 100 {
			return out, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hintLine is the "readproof: hint: " line of a command's output, or "".
func hintLine(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "readproof: hint: ") {
			return l
		}
	}
	return ""
}

// TestProjectDirPermissionMessages (session 17): in a project directory the
// user may not write, `init` (which makes the store there) and `resource
// add` (which locks readproof.toml beside it) failed with the bare system
// error and no hint:
//
//	readproof: error: create store …/.readproof: init store …: mkdir …/..readproof.init-N: permission denied
//	readproof: error: lock policy file: open …/readproof.toml.lock: permission denied
//
// Every error that comes down to a permission and carries no hint of its
// own now gets one about permissions.
func TestProjectDirPermissionMessages(t *testing.T) {
	t.Parallel()
	asUser, root, bin := permissionSandbox(t, "readproof-projperm-")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(filepath.Join(proj, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "policies", "refunds.md"), []byte("Products can be refunded within 30 days.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "readproof.toml"), []byte("version = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(proj, 0o555); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "config"))
	for _, args := range [][]string{
		{"init"},
		{"resource", "add", "readproof://demo/policies/refunds", "--source-type", "filesystem", "--path", "policies/refunds.md"},
	} {
		argv := append(append(append([]string(nil), asUser...), bin), args...)
		out, err := runNotBusy(argv, proj, env)
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(string(out), "permission denied") {
			t.Errorf("readproof %s in a directory the user may not write: %v, want exit 1 and \"permission denied\"\n%s", strings.Join(args, " "), err, out)
		}
		if h := hintLine(string(out)); !strings.Contains(h, "permission") || !strings.Contains(h, "ls -ld") {
			t.Errorf("readproof %s in a directory the user may not write: want a hint about permissions\n%s", strings.Join(args, " "), out)
		}
	}
}

// permRunner runs the readproof bin in proj, with root as HOME and the
// short lock timeout the permission tests use: as the test's own user, or
// as the unprivileged user asUser names when user is set. It returns the
// combined output and the exit code; a process that could not be run
// fails the test.
func permRunner(t *testing.T, asUser []string, root, bin, proj string) func(user bool, args ...string) (string, int) {
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+root, "XDG_CONFIG_HOME="+filepath.Join(root, "config"), "READPROOF_LOCK_TIMEOUT=50ms")
	return func(user bool, args ...string) (string, int) {
		t.Helper()
		argv := append([]string{bin}, args...)
		if user {
			argv = append(append([]string(nil), asUser...), argv...)
		}
		out, err := runNotBusy(argv, proj, env)
		var ee *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &ee):
			return string(out), ee.ExitCode()
		}
		t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, out)
		return "", 0
	}
}
