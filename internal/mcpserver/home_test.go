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
	if !inTestHome(dir) {
		t.Fatalf("os.UserConfigDir() is %s, not the tests' own: the in-process servers would read the developer's probe, receipts and signing keys there", dir)
	}
	for _, v := range []string{"READPROOF_RECEIPTS_KEY", "READPROOF_SIGNING_KEY", "READPROOF_MCP_TOKENS", "READPROOF_STORE", "READPROOF_CONFIG", "READPROOF_SESSION"} {
		if os.Getenv(v) != "" {
			t.Errorf("%s is set in the tests' environment", v)
		}
	}
}

// inTestHome reports whether dir is inside the HOME TestMain made: the
// config directory is $HOME/.config on Linux, $HOME/Library/Application
// Support on macOS and %AppData% (which TestMain sets under HOME) on
// Windows.
func inTestHome(dir string) bool {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if strings.HasPrefix(filepath.Base(d), homeDirPrefix) {
			return true
		}
		if filepath.Dir(d) == d {
			return false
		}
	}
}

// TestInTestHome: inTestHome accepts the config directory of every system
// under the tests' HOME, and nothing outside it. Before (session 23,
// rereadb) the check took the parent of the config directory for HOME, as
// on Linux: on macOS ($HOME/Library/Application Support)
// TestNoDeveloperKeysInProcess failed on every run.
func TestInTestHome(t *testing.T) {
	home := filepath.Join(os.TempDir(), homeDirPrefix+"123")
	for _, c := range []struct {
		dir  string
		want bool
	}{
		{filepath.Join(home, ".config"), true},
		{filepath.Join(home, "Library", "Application Support"), true},
		{filepath.Join(home, "AppData", "Roaming"), true},
		{filepath.Join(os.TempDir(), "someone", ".config"), false},
		{filepath.Join(os.TempDir(), "someone", "Library", "Application Support"), false},
	} {
		if got := inTestHome(c.dir); got != c.want {
			t.Errorf("inTestHome(%s) = %v, want %v", c.dir, got, c.want)
		}
	}
}
