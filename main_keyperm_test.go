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

// TestPolicyUnreadableMessage: a readproof.toml this user may not read is
// named as such, with a hint about its permissions. The hint was "fix
// FILE; readproof.toml.example documents every key", as for a mistake in
// its text.
func TestPolicyUnreadableMessage(t *testing.T) {
	t.Parallel()
	asUser, root, bin := permissionSandbox(t, "readproof-polperm-")
	proj := filepath.Join(root, "proj")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(proj, "readproof.toml")
	if err := os.WriteFile(policy, []byte("version = 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() != 0 {
		if err := os.Chmod(policy, 0); err != nil {
			t.Fatal(err)
		}
	}
	run := permRunner(t, asUser, root, bin, proj)
	for _, args := range [][]string{{"resource", "list"}, {"resource", "add", "readproof://demo/doc", "--source-type", "filesystem", "--path", "doc.md"}} {
		out, code := run(true, args...)
		if code != 2 || !strings.Contains(out, "permission denied") || !strings.Contains(out, policy) {
			t.Errorf("readproof %s with a policy file the user may not read: exit %d, want 2, naming it and \"permission denied\"\n%s", strings.Join(args, " "), code, out)
		}
		if h := hintLine(out); !strings.Contains(h, "may not read") || !strings.Contains(h, "ls -l") || strings.Contains(h, "readproof.toml.example") {
			t.Errorf("readproof %s with a policy file the user may not read: want a hint about its permissions, not its keys\n%s", strings.Join(args, " "), out)
		}
	}
}
