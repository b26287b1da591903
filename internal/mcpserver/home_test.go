package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// homeDirPrefix names the HOME TestMain gives the tests (isolateHome).
const homeDirPrefix = "readproof-mcpserver-home-"

// TestNoDeveloperKeysInProcess: the servers these tests run in this process
// find their default keys where the developer's own readproof keeps them
// (os.UserConfigDir: $XDG_CONFIG_HOME or $HOME/.config). TestMain points
// both at an empty directory of its own. Before session 23 the tests used
// the developer's: after `readproof probe key init`, as README-probe.md
// says to run, TestToolsValidAndInvalid failed ("want a tool error, got
// Mounted at position 1 ...": the probed mount found the key).
func TestNoDeveloperKeysInProcess(t *testing.T) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return // no config directory at all: nothing to read either
	}
	if !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), homeDirPrefix) {
		t.Fatalf("os.UserConfigDir() is %s, not the tests' own: the in-process servers would read the developer's probe, receipts and signing keys there", dir)
	}
	for _, v := range []string{"READPROOF_RECEIPTS_KEY", "READPROOF_SIGNING_KEY", "READPROOF_MCP_TOKENS", "READPROOF_STORE", "READPROOF_CONFIG", "READPROOF_SESSION"} {
		if os.Getenv(v) != "" {
			t.Errorf("%s is set in the tests' environment", v)
		}
	}
}
