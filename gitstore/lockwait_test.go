package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockWaits records what Options.LockWait hears.
type lockWaits struct {
	mu  sync.Mutex
	got []LockWaitInfo
}

func (w *lockWaits) hear(i LockWaitInfo) {
	w.mu.Lock()
	w.got = append(w.got, i)
	w.mu.Unlock()
}

func (w *lockWaits) all() []LockWaitInfo {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]LockWaitInfo(nil), w.got...)
}

// TestLockWaitIsTold (session 22): a writer that found a lock held waited
// up to the lock timeout or the stale-lock age without a word. LockWait
// now hears once of a wait that lasts LockWaitNotice, with the lock file,
// how long it has been held and what comes next; a lock freed sooner is
// never told.
func TestLockWaitIsTold(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	s, err := Init(dir)
	if err != nil {
		t.Fatal(err)
	}
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c1})
	mustSync(t, s)
	s.Close()
	open := func(o Options) (Store, *lockWaits) {
		t.Helper()
		var w lockWaits
		o.LockWait = w.hear
		st, err := OpenWithOptions(dir, o)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st, &w
	}

	// A ref lock held past the timeout: told once, that the write fails.
	lock := filepath.Join(dir, "refs", "heads", "main.lock")
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	const timeout = 300 * time.Millisecond
	st, w := open(Options{LockTimeout: timeout, StaleLockAge: time.Hour, LockWaitNotice: 50 * time.Millisecond})
	if err := st.Update(RefUpdate{Name: "refs/heads/main", Old: c1, New: c2}); !errors.Is(err, ErrLocked) {
		t.Fatalf("Update with the lock held: %v, want ErrLocked", err)
	}
	got := w.all()
	if len(got) != 1 {
		t.Fatalf("a held lock: LockWait heard %d times (%+v), want once", len(got), got)
	}
	if g := got[0]; g.Path != lock || g.Stale || g.Held < 40*time.Millisecond || g.Left <= 0 || g.Left > timeout-40*time.Millisecond {
		t.Errorf("a held lock: LockWait heard %+v, want %s held about 50ms, then failing within %s", g, lock, timeout)
	}
	os.Remove(lock)

	// packed-refs.lock, which a new ref waits for, turning stale before
	// the timeout: told once, that it is taken over.
	packed := filepath.Join(dir, "packed-refs.lock")
	if err := os.WriteFile(packed, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	const stale = 300 * time.Millisecond
	st, w = open(Options{LockTimeout: time.Minute, StaleLockAge: stale, LockWaitNotice: 50 * time.Millisecond})
	mustUpdate(t, st, RefUpdate{Name: "refs/heads/new", New: c2})
	got = w.all()
	if len(got) != 1 {
		t.Fatalf("a lock turning stale: LockWait heard %d times (%+v), want once", len(got), got)
	}
	if g := got[0]; g.Path != packed || !g.Stale || g.Held < 40*time.Millisecond || g.Left <= 0 || g.Left > stale-40*time.Millisecond {
		t.Errorf("a lock turning stale: LockWait heard %+v, want %s held about 50ms, then taken over within %s", g, packed, stale)
	}

	// A lock freed before the notice: nothing.
	if err := os.WriteFile(lock, nil, 0o666); err != nil {
		t.Fatal(err)
	}
	st, w = open(Options{LockTimeout: time.Minute, StaleLockAge: time.Hour, LockWaitNotice: 5 * time.Second})
	go func() {
		time.Sleep(20 * time.Millisecond)
		os.Remove(lock)
	}()
	mustUpdate(t, st, RefUpdate{Name: "refs/heads/main", Old: c1, New: c2})
	if got := w.all(); len(got) != 0 {
		t.Errorf("a lock freed at once: LockWait heard %+v, want nothing", got)
	}
	assertNoLocks(t, dir)
}

// TestGCMaintenanceWaitIsTold (session 23): gc waiting for a running
// automatic maintenance (up to half an hour) said nothing. LockWait now
// hears once of it, naming the maintenance lock and how to find its
// holder; the gc runs once the lock is free.
func TestGCMaintenanceWaitIsTold(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s, unlock := lockedWithLoose(t)
	var w lockWaits
	heard := make(chan struct{})
	tell := func(i LockWaitInfo) {
		w.hear(i)
		close(heard)
	}
	done := make(chan error, 1)
	go func() {
		_, err := GC(context.Background(), s.path, GCOptions{Grace: time.Hour, LockWait: tell, LockWaitNotice: 50 * time.Millisecond})
		done <- err
	}()
	select {
	case <-heard:
	case err := <-done:
		t.Fatalf("gc ended (%v) without a word while maintenance held its lock", err)
	case <-time.After(2 * time.Second):
		t.Error("gc waiting for a running maintenance: LockWait heard nothing in 2s")
	}
	unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	got := w.all()
	if len(got) != 1 {
		t.Fatalf("LockWait heard %d times (%+v), want once", len(got), got)
	}
	if g := got[0]; g.Path != maintenanceLockPath(s.path) || !strings.Contains(g.String(), "maintenance") || g.Find == "" || g.Left <= 0 {
		t.Errorf("LockWait heard %+v (%s), want the maintenance lock %s, how to find its holder and the time left", g, g, maintenanceLockPath(s.path))
	}
}
