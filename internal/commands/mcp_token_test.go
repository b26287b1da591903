package commands

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// TestParseLifetime: --expires takes seconds to weeks, and the error of a
// lifetime it refuses names the units it takes.
func TestParseLifetime(t *testing.T) {
	t.Parallel()
	const day = 24 * time.Hour
	for s, want := range map[string]time.Duration{"": 0, "90m": 90 * time.Minute, "12h": 12 * time.Hour, "30d": 30 * day, "2w": 14 * day, "1w": 7 * day, "9362w": 9362 * 7 * day} {
		got, err := parseLifetime(s)
		if err != nil || got != want {
			t.Errorf("parseLifetime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{"soon", "w", "0w", "-2w", "2.5w", "9363w", "1w2d"} {
		if _, err := parseLifetime(s); err == nil {
			t.Errorf("parseLifetime(%q) took it", s)
		} else if msg := err.Error() + " " + hint.Of(err); !strings.Contains(msg, "w (weeks)") {
			t.Errorf("parseLifetime(%q): %q does not name the units", s, msg)
		}
	}
}

// TestTokenHintKeepsTheLockFilesHint: a token file whose lock file cannot
// be created (its directory read-only, a full disk) keeps the lock's own
// hint, which says what to fix, rather than the advice about where a token
// file may lie.
func TestTokenHintKeepsTheLockFilesHint(t *testing.T) {
	t.Parallel()
	const lockHint = "this user may not create or remove files in /cfg (permission denied): fix its permissions (ls -ld /cfg shows its owner and mode), or run readproof as a user who may"
	err := fmt.Errorf("locking the MCP token file: %w", hint.With(fmt.Errorf("cannot create the lock file /cfg/mcp-tokens.json.lock: %w", fs.ErrPermission), lockHint))
	got := tokenHint(err, "/cfg/mcp-tokens.json")
	if h := hint.Of(got); h != lockHint {
		t.Errorf("hint %q, want the lock file's %q", h, lockHint)
	}
	if !errors.Is(got, fs.ErrPermission) || got.Error() != err.Error() {
		t.Errorf("error %q changed", got)
	}
}
