//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestBreakerNeverPutsBackOverANewerLock (session 28's re-read, for
// mine5's change, which came without a test): a breaker that finds it
// moved aside a fresh lock (a readproof older than session 28 broke the
// stale one and took the name meanwhile) puts it back only while the name
// is free. When a third writer has taken the name since, its lock stays,
// and the moved lock is dropped (its writer's update fails): before,
// the moved lock was renamed over the newer one, and two writers each
// held the lock.
func TestBreakerNeverPutsBackOverANewerLock(t *testing.T) {
	r := NewTestStore(t).(*repo)
	lock := filepath.Join(r.path, "refs", "heads", "x.lock")
	if err := os.MkdirAll(filepath.Dir(lock), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lock, nil, 0o600); err != nil { // a killed writer's
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	var newer os.FileInfo
	movedAside = func(lock, aside string) {
		// what was moved is the fresh lock of the old readproof that
		// broke the killed writer's first, and a third writer has the
		// name now
		if err := os.WriteFile(aside+".fresh", []byte("fresh\n"), 0o600); err != nil {
			t.Error(err)
		}
		if err := os.Rename(aside+".fresh", aside); err != nil {
			t.Error(err)
		}
		if err := os.WriteFile(lock, []byte("newer\n"), 0o600); err != nil {
			t.Error(err)
		}
		newer, _ = os.Lstat(lock)
	}
	defer func() { movedAside = nil }()
	if r.breakStaleLock(lock) {
		t.Error("the breaker moved a fresh lock and said the stale one was gone")
	}
	if newer == nil {
		t.Fatal("the breaker moved nothing aside: the test proves nothing")
	}
	got, err := os.Lstat(lock)
	if err != nil || !os.SameFile(got, newer) {
		b, _ := os.ReadFile(lock)
		t.Errorf("the lock is %q (%v), want the newer writer's, left in place", b, err)
	}
	if left, _ := filepath.Glob(filepath.Join(filepath.Dir(lock), "x.stale-*.lock")); len(left) != 0 {
		t.Errorf("the moved lock was left aside: %q", left)
	}
}
