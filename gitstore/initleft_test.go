//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"
)

// TestInitSweepsKilledInit: an init (and SweepInitLeft, for an init that
// finds the store made) removes the temporary directory a killed init
// left beside the store once it is older than the stale-lock age and
// nobody holds its flock, and nothing else: not a young one, not one an
// init in progress holds, not a name that only looks like one (letters
// after the prefix, another store's prefix), not a file or a link by such
// a name.
func TestInitSweepsKilledInit(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	path := filepath.Join(parent, "store")
	old := time.Now().Add(-time.Hour)
	mk := func(name string, age bool) string {
		t.Helper()
		p := filepath.Join(parent, name)
		if err := os.MkdirAll(filepath.Join(p, "objects"), 0o700); err != nil {
			t.Fatal(err)
		}
		if age {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
		return p
	}
	mk(".store.init-123", true)  // a killed init's: removed
	mk(".store.init-456", false) // young: an init may be building there
	held := mk(".store.init-789", true)
	mk(".store.init-12x", true) // not os.MkdirTemp's digits
	mk(".other.init-123", true) // another store's
	if err := os.WriteFile(filepath.Join(parent, ".store.init-111"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	target := mk("elsewhere", true)
	if err := os.Symlink(target, filepath.Join(parent, ".store.init-222")); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{filepath.Join(parent, ".store.init-111"), filepath.Join(parent, ".store.init-222")} {
		os.Chtimes(p, old, old)
	}
	release, err := holdScratch(held) // an init in progress
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{StaleLockAge: time.Minute}
	g, err := InitWithOptions(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	want := []string{".other.init-123", ".store.init-111", ".store.init-12x", ".store.init-222", ".store.init-456", ".store.init-789", "elsewhere", "store"}
	if got := names(t, parent); !slices.Equal(got, want) {
		t.Fatalf("after init: %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(target, "objects")); err != nil {
		t.Fatalf("the link's target was touched: %v", err)
	}
	// a killed init's, left beside a store another init made meanwhile
	mk(".store.init-999", true)
	release()
	// The flock of .store.init-789 outlives release while a child that
	// another test's goroutine forked meanwhile still holds a copy of the
	// descriptor (until its exec closes it): a sweep then skips it, as it
	// should a held one. So sweep until it is gone, as the next init would.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		SweepInitLeft(path, opts)
		if _, err := os.Lstat(held); os.IsNotExist(err) || time.Now().After(deadline) {
			break
		}
	}
	want = []string{".other.init-123", ".store.init-111", ".store.init-12x", ".store.init-222", ".store.init-456", "elsewhere", "store"}
	if got := names(t, parent); !slices.Equal(got, want) {
		t.Fatalf("after SweepInitLeft: %q, want %q", got, want)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}
