//go:build unix

package lockfile_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/text"
)

// TestUnflockableLockHintOffersNoTakeOver (session 28's re-read): a stale
// lock whose flock readproof cannot take (here a symbolic link, which it
// opens without following; a file system without flock is the other case)
// is never taken over, and the timeout's hint says so and offers the rm;
// before, it said readproof would take it over once older than the stale
// age, which it never does.
func TestUnflockableLockHintOffersNoTakeOver(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "readproof.toml.lock")
	if err := os.WriteFile(filepath.Join(dir, "target"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("target", lock); err != nil {
		t.Fatal(err)
	}
	_, err := lockfile.Acquire(lock, lockfile.Options{Timeout: 30 * time.Millisecond, StaleAge: time.Nanosecond, Holder: "another readproof", Task: "changing the policy file"})
	if !errors.Is(err, lockfile.ErrLocked) {
		t.Fatalf("a lock whose flock cannot be taken: %v, want ErrLocked", err)
	}
	h := hint.Of(err)
	if strings.Contains(h, "takes it over once") || !strings.Contains(h, "never takes it over") || !strings.HasSuffix(h, "rm "+text.ShellArg(lock)) {
		t.Errorf("hint %q, want one saying the lock is never taken over and ending in its rm", h)
	}
	if fi, err := os.Lstat(lock); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the lock was taken over: %v", err)
	}
}
