package policy

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// TestAppendResourceThenOrder: beforeWrite runs only for a resource the file
// accepts, before the file is written; its error leaves the file unchanged
// (resource add creates the store there, issue 15).
func TestAppendResourceThenOrder(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), "readproof.toml")
	r := Resource{URI: mustURI(t, "readproof://demo/a"), Source: sourcespec.Spec{Type: "filesystem", Path: "a.md"}, Freshness: Freshness{Strategy: RequireFresh}}

	failed := errors.New("no store")
	if err := AppendResourceThen(path, r, func() error {
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the file exists before beforeWrite returned: %v", err)
		}
		return failed
	}); !errors.Is(err, failed) {
		t.Fatalf("AppendResourceThen = %v, want the hook's error", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a failed hook left the file: %v", err)
	}

	calls := 0
	hook := func() error { calls++; return nil }
	if err := AppendResourceThen(path, r, hook); err != nil {
		t.Fatal(err)
	}
	if calls != 1 {
		t.Fatalf("hook ran %d times, want 1", calls)
	}
	// a duplicate is refused before the hook
	if err := AppendResourceThen(path, r, hook); !errors.Is(err, ErrDuplicate) {
		t.Fatalf("duplicate: %v", err)
	}
	if calls != 1 {
		t.Fatalf("the hook ran for a refused resource")
	}
}
