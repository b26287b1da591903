package main

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestKeyDirReadOnlyMessages: a key or token file whose directory is on a
// read-only file system is named as such, with a hint to remount it or name
// another path. `key init` and `probe key init` said to free space ("df
// shows it"), `receipts key init` gave no hint at all, and `mcp token add`
// said the token file must be a 0600 file outside every repository.
func TestKeyDirReadOnlyMessages(t *testing.T) {
	config := testproc.SmallTmpfs(t, "1m")
	if out, err := exec.Command("mount", "-o", "remount,ro", config).CombinedOutput(); err != nil {
		t.Skipf("cannot remount a tmpfs read-only: %v: %s", err, out)
	}
	bin, err := exec.LookPath("readproof")
	if err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=", "HOME="+t.TempDir(), "XDG_CONFIG_HOME="+config)
	for _, args := range [][]string{
		{"key", "init"},
		{"probe", "key", "init"},
		{"receipts", "key", "init"},
		{"mcp", "token", "add", "t1"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Dir, cmd.Env = t.TempDir(), env
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(string(out), "read-only file system") {
			t.Errorf("readproof %s with a read-only config directory: %v, want exit 1 and \"read-only file system\"\n%s", strings.Join(args, " "), err, out)
		}
		if h := hintLine(string(out)); !strings.Contains(h, "read-only") || !strings.Contains(h, "remount") || strings.Contains(h, "free space") || strings.Contains(h, "0600") {
			t.Errorf("readproof %s with a read-only config directory: want a hint about the read-only file system\n%s", strings.Join(args, " "), out)
		}
	}
}
