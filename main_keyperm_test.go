package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeyDirPermissionMessages: a key or token file whose directory this
// user may not write (a HOME of another user, a config directory made
// read-only) is named as such, with a hint about permissions. `key init`
// and `probe key init` said to free space on the file system ("df shows
// it"), and `mcp token add` that the token file must be a 0600 file outside
// every repository, neither of which was the cause.
func TestKeyDirPermissionMessages(t *testing.T) {
	t.Parallel()
	asUser, root, bin := permissionSandbox(t, "readproof-keyperm-")
	proj := filepath.Join(root, "proj")
	config := filepath.Join(root, "config")
	for _, d := range []string{proj, config} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(config, 0o555); err != nil {
		t.Fatal(err)
	}
	run := permRunner(t, asUser, root, bin, proj)
	for _, args := range [][]string{
		{"key", "init"},
		{"probe", "key", "init"},
		{"receipts", "key", "init"},
		{"mcp", "token", "add", "t1"},
	} {
		out, code := run(true, args...)
		if code != 1 || !strings.Contains(out, "permission denied") || !strings.Contains(out, config) {
			t.Errorf("readproof %s with a config directory the user may not write: exit %d, want 1, naming %s and \"permission denied\"\n%s", strings.Join(args, " "), code, config, out)
		}
		if h := hintLine(out); !strings.Contains(h, "permission") || !strings.Contains(h, "ls -ld") || strings.Contains(h, "free space") || strings.Contains(h, "0600") {
			t.Errorf("readproof %s with a config directory the user may not write: want a hint about permissions, not space or the file's place\n%s", strings.Join(args, " "), out)
		}
	}
	if entries, err := os.ReadDir(config); err != nil || len(entries) != 0 {
		t.Errorf("the config directory holds %d files (%v), want none", len(entries), err)
	}
}
