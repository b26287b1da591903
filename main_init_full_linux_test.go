package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestInitPolicyFileFullDisk: `readproof init` that makes the store but
// cannot write readproof.toml (its directory on a full disk) says the
// store was made, what stopped the policy file and that init run again
// writes it; no part of the file is left. It said only "write
// …/readproof.toml: no space left on device", with no hint. On a 1 MiB
// tmpfs (root only).
func TestInitPolicyFileFullDisk(t *testing.T) {
	proj := testproc.SmallTmpfs(t, "1m")
	bin, err := exec.LookPath("readproof")
	if err != nil {
		t.Fatal(err)
	}
	st := filepath.Join(t.TempDir(), "st")
	home := t.TempDir()
	env := append(os.Environ(), "READPROOF_STORE="+st, "READPROOF_CONFIG=", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	readproof := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("readproof %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(proj, &fs); err != nil {
		t.Fatal(err)
	}
	filler := filepath.Join(proj, "filler")
	if err := os.WriteFile(filler, make([]byte, int64(fs.Bavail)*int64(fs.Bsize)), 0o600); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(proj, "readproof.toml")
	out, code := readproof("init")
	if code != 1 || !strings.Contains(out, "init: the store "+st+" was made, but the policy file was not written") || !strings.Contains(out, "no space left on device") {
		t.Errorf("init with the policy file's directory full: exit %d, want 1, the store made and the policy file not written\n%s", code, out)
	}
	if h := hintLine(out); !strings.Contains(h, "free space") || !strings.Contains(h, "run `readproof --store "+st+" init` again") {
		t.Errorf("init with the policy file's directory full: want a hint to free space and run init again\n%s", out)
	}
	if _, err := os.Lstat(policy); err == nil {
		t.Errorf("init left %s", policy)
	}
	if _, err := os.Stat(filepath.Join(st, "HEAD")); err != nil {
		t.Errorf("the store: %v", err)
	}
	// with the store and the policy file named on the line, the hint's
	// command names them too: `readproof init` as written made another
	// store in the working directory
	st2, policy2 := filepath.Join(t.TempDir(), "st2"), filepath.Join(proj, "p2.toml")
	out, code = readproof("--store", st2, "--config", policy2, "init")
	again := "`readproof --store " + st2 + " --config " + policy2 + " init` again"
	if h := hintLine(out); code != 1 || !strings.Contains(h, again) {
		t.Errorf("init --store --config with the policy file's directory full: exit %d, want 1 and a hint to run %s\n%s", code, again, out)
	}
	// as the hint says: space again, init again
	os.Remove(filler)
	if out, code := readproof("--store", st2, "--config", policy2, "init"); code != 0 || !strings.Contains(out, "Created "+policy2) {
		t.Errorf("the hint's init: exit %d, want 0 and the policy file created\n%s", code, out)
	}
	if out, code := readproof("init"); code != 0 || !strings.Contains(out, "Created "+policy) {
		t.Errorf("init again: exit %d, want 0 and the policy file created\n%s", code, out)
	}
}

// TestResourceAddFullDisk: `readproof resource add` whose readproof.toml
// is on a full disk leaves the file as it was and says so, with the space
// to free. It said only the temporary file's write error, with no hint.
// On a 1 MiB tmpfs (root only).
func TestResourceAddFullDisk(t *testing.T) {
	proj := testproc.SmallTmpfs(t, "1m")
	bin, err := exec.LookPath("readproof")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(), "READPROOF_STORE="+filepath.Join(t.TempDir(), "st"), "READPROOF_CONFIG=", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	readproof := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = proj, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("readproof %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	if out, code := readproof("init"); code != 0 {
		t.Fatalf("init: exit %d\n%s", code, out)
	}
	policy := filepath.Join(proj, "readproof.toml")
	before, err := os.ReadFile(policy)
	if err != nil {
		t.Fatal(err)
	}
	var fs syscall.Statfs_t
	if err := syscall.Statfs(proj, &fs); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, "filler"), make([]byte, int64(fs.Bavail)*int64(fs.Bsize)), 0o600); err != nil {
		t.Fatal(err)
	}
	out, code := readproof("resource", "add", "readproof://demo/doc", "--source-type", "filesystem", "--path", "doc.md")
	if code != 1 || !strings.Contains(out, "no space left on device") {
		t.Errorf("resource add on a full disk: exit %d, want 1 and the full disk\n%s", code, out)
	}
	if h := hintLine(out); !strings.Contains(h, "readproof.toml is unchanged") || !strings.Contains(h, "free space") {
		t.Errorf("resource add on a full disk: want a hint that readproof.toml is unchanged and to free space\n%s", out)
	}
	if after, err := os.ReadFile(policy); err != nil || string(after) != string(before) {
		t.Errorf("readproof.toml changed (%v):\n%s", err, after)
	}
	if left, _ := filepath.Glob(filepath.Join(proj, ".readproof.toml*")); len(left) > 0 {
		t.Errorf("resource add left %v", left)
	}
}
