//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLockBrokenBeforeItsFlock: a writer stopped between creating its lock
// file and taking its flock, for longer than the stale-lock age, finds
// once it has the flock that a breaker took the lock meanwhile and a new
// writer holds the name: it does not take that file for its own (renaming
// it into place would publish the other's value), and tries again.
func TestLockBrokenBeforeItsFlock(t *testing.T) {
	t.Parallel()
	st := NewTestStore(t)
	r := st.(*repo)
	lock := filepath.Join(r.path, "refs", "heads", "x.lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	f, err := r.perm.create(lock, r.perm.file()) // the stopped writer's create
	if err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	os.Chtimes(lock, old, old) // stopped an hour
	if !r.breakStaleLock(lock) {
		t.Fatal("a lock nobody holds the flock of, an hour old, was not broken")
	}
	other, err := r.lockFile(filepath.Join(r.path, "refs", "heads", "x"), "refs/heads/x", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer other.release()
	l, ok, err := r.takeLock(lock, f, time.Now())
	if ok || err != nil {
		t.Fatalf("the stopped writer, continued, took the lock file as its own (%v, %v): its rename would move the other writer's lock", l != nil, err)
	}
	// and the other writer's lock cannot be broken while it lives
	os.Chtimes(lock, old, old)
	if r.breakStaleLock(lock) || !other.owned() {
		t.Fatal("a lock whose flock a live writer holds was broken")
	}
}
