//go:build unix

package lockfile_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/lockfile"
)

// holdFlockAfterCreate makes the next lock file created have its flock
// taken by another open file (as a waiter stopped while it looked at the
// file holds it) before its creator can take it; then, with replace, puts
// another file, holding "another's", at the lock's name. It returns the
// release of the flock.
func holdFlockAfterCreate(t *testing.T, replace bool) (release func()) {
	var held *os.File
	other := filepath.Join(t.TempDir(), "another's lock")
	lockfile.AfterCreate(func(path string) {
		lockfile.AfterCreate(nil)
		f, err := os.Open(path)
		if err != nil {
			t.Error(err)
			return
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Error(err)
		}
		held = f
		if replace {
			if err := os.WriteFile(other, []byte("another's"), 0o600); err != nil {
				t.Error(err)
			}
			if err := os.Rename(other, path); err != nil {
				t.Error(err)
			}
		}
	})
	return func() {
		lockfile.AfterCreate(nil)
		if held != nil {
			held.Close()
		}
	}
}

// TestCreatedLockNotHeldIsRemoved: a lock file this process created but
// whose flock another held past the wait is removed when the wait ends,
// and is not left for the stale rule or a human's rm; a file another put
// at the lock's name meanwhile is never removed.
func TestCreatedLockNotHeldIsRemoved(t *testing.T) {
	o := lockfile.Options{Timeout: time.Millisecond, StaleAge: time.Hour}

	lock := filepath.Join(t.TempDir(), "readproof.toml.lock")
	release := holdFlockAfterCreate(t, false)
	_, err := lockfile.Acquire(lock, o)
	release()
	if !errors.Is(err, lockfile.ErrLocked) {
		t.Fatalf("a lock whose flock another held: %v, want ErrLocked", err)
	}
	if _, err := os.Lstat(lock); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the lock file this process created and could not hold was left: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(filepath.Dir(lock), "readproof.toml.break.lock")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the break lock was left: %v", err)
	}

	lock = filepath.Join(t.TempDir(), "readproof.toml.lock")
	release = holdFlockAfterCreate(t, true)
	_, err = lockfile.Acquire(lock, o)
	release()
	if err == nil {
		t.Fatal("a lock whose flock another held was taken")
	}
	if data, err := os.ReadFile(lock); err != nil || string(data) != "another's" {
		t.Errorf("the file another put at the lock's name was removed or changed: %q, %v", data, err)
	}
}
