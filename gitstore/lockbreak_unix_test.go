//go:build unix

package gitstore

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
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

// TestSweepLeavesLiveVersionsOfPackedRefs: a version of packed-refs that a
// live writer holds (packed-refs.1.lock, stopped an hour before its rename)
// is left by another process's sweep of stale locks, as a ref lock is; the
// sweep still removes one a killed writer left.
func TestSweepLeavesLiveVersionsOfPackedRefs(t *testing.T) {
	t.Parallel()
	r := NewTestStore(t).(*repo)
	l, err := r.createPackedTemp("packed-refs.1.lock")
	if err != nil {
		t.Fatal(err)
	}
	defer l.release()
	killed := filepath.Join(r.path, "packed-refs.2.lock")
	if err := os.WriteFile(killed, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, p := range []string{l.path, killed} {
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	r.mu.Lock()
	r.sweptAt = time.Time{}
	r.sweepStale()
	r.mu.Unlock()
	if !l.owned() {
		t.Error("the sweep removed a version of packed-refs its live writer holds")
	}
	if _, err := os.Lstat(killed); err == nil {
		t.Error("the sweep left a version of packed-refs a killed writer left: the test proves nothing")
	}
}

// TestLockWaitSaysLiveHolder: the wait for a lock a live readproof holds,
// however old, says so and says it ends at the timeout, not in a takeover
// (docs/cli.md); one nobody holds is to be taken over.
func TestLockWaitSaysLiveHolder(t *testing.T) {
	t.Parallel()
	r := NewTestStore(t).(*repo)
	target := filepath.Join(r.path, "refs", "heads", "x")
	os.MkdirAll(filepath.Dir(target), 0o755)
	held, err := r.lockFile(target, "refs/heads/x", time.Now().Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer held.release()
	old := time.Now().Add(-time.Hour)
	os.Chtimes(held.path, old, old)
	r.opts.StaleLockAge = time.Minute
	now := time.Now()
	w, ok := r.lockWaitInfo(held.path, now, now.Add(5*time.Second))
	if !ok || w.Stale || w.Holder != "a live readproof (running or stopped)" || w.Left != 5*time.Second || w.Find == "" {
		t.Errorf("the wait for a lock a live readproof holds: %+v, want it held by a live readproof until the timeout, with a way to find it", w)
	}
	// left by a killed writer (no flock)
	dead := target + "2.lock"
	os.WriteFile(dead, nil, 0o600)
	os.Chtimes(dead, old, old)
	if w, ok := r.lockWaitInfo(dead, now, now.Add(5*time.Second)); !ok || !w.Stale || w.Left != 0 {
		t.Errorf("the wait for a lock nobody holds, an hour old: %+v, want it taken over now", w)
	}
}

// TestLockFlockBusyHint: a lock file just made whose flock another process
// holds (a waiter stopped as it looked at it) ends the wait, after a
// second, with ErrLocked and a hint, as every error does.
func TestLockFlockBusyHint(t *testing.T) {
	t.Parallel()
	r := NewTestStore(t).(*repo)
	lock := filepath.Join(r.path, "refs", "heads", "y.lock")
	os.MkdirAll(filepath.Dir(lock), 0o755)
	f, err := r.perm.create(lock, r.perm.file())
	if err != nil {
		t.Fatal(err)
	}
	st, release := lockHolder(lock, mustLstat(t, lock)) // the stopped waiter
	if st != holderGone {
		t.Fatalf("a lock nobody holds the flock of: %v", st)
	}
	defer release()
	_, ok, err := r.takeLock(lock, f, time.Now())
	if ok || !errors.Is(err, ErrLocked) || hint.Of(err) == "" {
		t.Errorf("a lock whose flock another holds: %v (ok %v, hint %q), want ErrLocked with a hint", err, ok, hint.Of(err))
	}
}

func mustLstat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}
