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
	if h := hintLine(out); !strings.Contains(h, "free space") || !strings.Contains(h, "run `readproof init` again") {
		t.Errorf("init with the policy file's directory full: want a hint to free space and run init again\n%s", out)
	}
	if _, err := os.Lstat(policy); err == nil {
		t.Errorf("init left %s", policy)
	}
	if _, err := os.Stat(filepath.Join(st, "HEAD")); err != nil {
		t.Errorf("the store: %v", err)
	}
	// as the hint says: space again, init again
	os.Remove(filler)
	if out, code := readproof("init"); code != 0 || !strings.Contains(out, "Created "+policy) {
		t.Errorf("init again: exit %d, want 0 and the policy file created\n%s", code, out)
	}
}
