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

// TestExecFullDiskNotRun: `readproof exec` with a store on a full disk
// does not run the command, as with a read-only store, and says to free
// space. The check before it made an empty file, which a full disk still
// takes: the command ran, and then "the command ran (exit 0) but its
// receipt could not be recorded". On a 1 MiB tmpfs (root only).
func TestExecFullDiskNotRun(t *testing.T) {
	mnt := testproc.SmallTmpfs(t, "1m")
	bin, err := exec.LookPath("readproof")
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, "config"))
	readproof := func(args ...string) (string, int) {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = mnt, env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return string(out), ee.ExitCode()
		} else if err != nil {
			t.Fatalf("readproof %s: %v", strings.Join(args, " "), err)
		}
		return string(out), 0
	}
	for _, args := range [][]string{{"init"}, {"receipts", "key", "init"}} {
		if out, code := readproof(args...); code != 0 {
			t.Fatalf("readproof %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
	}
	var st syscall.Statfs_t
	if err := syscall.Statfs(mnt, &st); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mnt, "filler"), make([]byte, int64(st.Bavail)*int64(st.Bsize)), 0o600); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(home, "ran")
	out, code := readproof("exec", "--session", "s1", "--", "touch", marker)
	if _, err := os.Stat(marker); err == nil {
		t.Errorf("exec on a full disk ran the command:\n%s", out)
	}
	if code != 1 || !strings.Contains(out, "the command was not run") || !strings.Contains(out, "no space left on device") {
		t.Errorf("exec on a full disk: exit %d, want 1, \"the command was not run\" and the full disk\n%s", code, out)
	}
	if h := hintLine(out); !strings.Contains(h, "free space") {
		t.Errorf("exec on a full disk: want a hint to free space\n%s", out)
	}
	if left, _ := filepath.Glob(filepath.Join(mnt, ".readproof", "objects", "tmp_*")); len(left) > 0 {
		t.Errorf("exec on a full disk left %v", left)
	}
	// with space again, the same call runs and is recorded
	os.Remove(filepath.Join(mnt, "filler"))
	if out, code := readproof("exec", "--session", "s1", "--", "touch", marker); code != 0 {
		t.Fatalf("exec once space is free: exit %d\n%s", code, out)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Error(err)
	}
}
