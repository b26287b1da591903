package gitstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// pendingBlobs writes n unreachable blobs, as a writer's objects are
// before its ref update, and makes them durable.
func pendingBlobs(t *testing.T, s Store, n int) []OID {
	t.Helper()
	return putBlobs(t, s, n, func(i int) string {
		return fmt.Sprintf("written a moment ago, ref not updated yet %d\n", i)
	})
}

// maintainRetrying runs s.maintain, tried again for up to a second: the
// free maintenance lock can look held for a moment while a git process
// another test forks holds a copy of its descriptor (TestMaintenanceLock).
func maintainRetrying(s *repo) bool {
	for try := 0; try < 200; try++ {
		if s.maintain(context.Background()) {
			return true
		}
		time.Sleep(5 * time.Millisecond)
	}
	return false
}

func checkKept(t *testing.T, dir string, ids []OID, what string) {
	t.Helper()
	for _, id := range ids {
		if err := GitCommand(t, dir, "cat-file", "-e", string(id)).Run(); err != nil {
			t.Errorf("unreachable object %s written a moment ago is gone after %s", id, what)
		}
	}
}

// A git gc must not run while automatic maintenance is between packing the
// loose objects and removing their loose files (TestGCWhileWriting in
// internal/storecheck lost objects so): gc's repack replaces the new pack
// and loosens its unreachable objects only where it sees no loose copy,
// the copy then goes, and with it the object. Maintenance holds gc.pid as
// git gc does, so the gc below refuses to start; before, it ran and the
// pending blobs were lost.
func TestMaintenanceKeepsGitGCOut(t *testing.T) {
	t.Parallel()
	st := NewTestStore(t)
	s := st.(*repo)
	writeSmallUpdates(t, st, "refs/heads/main", 2)
	ids := pendingBlobs(t, st, 3)
	cutoff := "@" + strconv.FormatInt(time.Now().Add(-time.Hour).Unix(), 10)
	var gcOut []byte
	var gcErr error
	ran := false
	s.beforeUnpack = func() {
		ran, s.beforeUnpack = true, nil
		gcOut, gcErr = GitCommand(t, s.path, "-c", "gc.auto=0", "-c", "gc.cruftPacks=false", "gc", "--quiet", "--prune="+cutoff).CombinedOutput()
	}
	if !maintainRetrying(s) {
		t.Fatal("maintenance did not run")
	}
	if !ran {
		t.Fatal("maintenance packed nothing")
	}
	if gcErr == nil {
		t.Errorf("git gc ran while maintenance held the store:\n%s", gcOut)
	}
	checkKept(t, s.path, ids, "a git gc tried to run alongside maintenance")
	if fileExists(filepath.Join(s.path, "gc.pid")) {
		t.Error("maintenance left gc.pid behind")
	}
	// Afterwards git gc runs, and keeps them (they are young).
	if out, err := GitCommand(t, s.path, "-c", "gc.auto=0", "-c", "gc.cruftPacks=false", "gc", "--quiet", "--prune="+cutoff).CombinedOutput(); err != nil {
		t.Fatalf("git gc after maintenance: %v\n%s", err, out)
	}
	checkKept(t, s.path, ids, "git gc")
	Fsck(t, s.path)
}

// readproof gc started while maintenance runs waits for it, then runs.
func TestGCWaitsForMaintenance(t *testing.T) {
	t.Parallel()
	st := NewTestStore(t)
	s := st.(*repo)
	writeSmallUpdates(t, st, "refs/heads/main", 2)
	ids := pendingBlobs(t, st, 3)
	done := make(chan error, 1)
	doneEarly := false
	s.beforeUnpack = func() {
		s.beforeUnpack = nil
		go func() {
			_, err := GC(context.Background(), s.path, GCOptions{Grace: time.Hour})
			done <- err
		}()
		select {
		case err := <-done:
			doneEarly = true
			done <- err
		case <-time.After(200 * time.Millisecond):
		}
	}
	if !maintainRetrying(s) {
		t.Fatal("maintenance did not run")
	}
	if err := <-done; err != nil {
		t.Fatalf("gc: %v", err)
	}
	if doneEarly {
		t.Error("gc ran while maintenance held the store")
	}
	checkKept(t, s.path, ids, "a gc started during maintenance")
	// one pack of what is reachable, and the cruft pack of the pending
	// (unreachable, young) objects
	if loose, packs := looseAndPacks(t, s.path); loose != 0 || packs != 2 {
		t.Errorf("after gc: %d loose objects, %d packs; want no loose object and two packs", loose, packs)
	}
	Fsck(t, s.path)
}

// TestGCNamesRunningGitGC: a gc that finds another git gc running (a
// `readproof gc` killed with kill -9 leaves its git gc running) names the
// process to wait for, from git's gc.pid, and ends in a hint. It said only
// "another git gc is running on this store: wait for it to finish".
func TestGCNamesRunningGitGC(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	host, err := os.Hostname()
	if err != nil {
		t.Skip(err)
	}
	// this process: alive, as the orphaned git gc is
	pid := strconv.Itoa(os.Getpid())
	pidFile := filepath.Join(s.Path(), "gc.pid")
	if err := os.WriteFile(pidFile, []byte(pid+" "+host), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour})
	if !errors.Is(err, ErrGCRunning) {
		t.Fatalf("gc beside a running git gc: %v, want ErrGCRunning", err)
	}
	if want := "pid " + pid + " on " + host + " (" + pidFile + ")"; !strings.Contains(err.Error(), want) {
		t.Errorf("gc beside a running git gc: %q, want it to name %q", err, want)
	}
	if h := hint.Of(err); !strings.Contains(h, "ps -p "+pid) || !strings.Contains(h, "run `readproof gc` again") {
		t.Errorf("gc beside a running git gc: hint %q, want `ps -p %s` and to run gc again", h, pid)
	}
	if b, err := os.ReadFile(pidFile); err != nil || string(b) != pid+" "+host {
		t.Errorf("gc.pid was changed: %q, %v", b, err)
	}
}

// TestGCRunningErrorFromGCPid: git's message without the pid (another
// wording) falls back on gc.pid, and a gc.pid of another machine is said
// to run there.
func TestGCRunningErrorFromGCPid(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "gc.pid"), []byte("4242 elsewhere\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := gcRunningError("st", dir, "fatal: gc is already running")
	if !errors.Is(err, ErrGCRunning) || !strings.Contains(err.Error(), "pid 4242 on elsewhere") || !strings.Contains(hint.Of(err), "on the machine elsewhere") {
		t.Errorf("%q (hint %q), want pid 4242 on elsewhere", err, hint.Of(err))
	}
	if err := os.Remove(filepath.Join(dir, "gc.pid")); err != nil {
		t.Fatal(err)
	}
	err = gcRunningError("st", dir, "fatal: gc is already running")
	if !errors.Is(err, ErrGCRunning) || strings.Contains(err.Error(), "pid") || !strings.Contains(hint.Of(err), "wait for it to finish") {
		t.Errorf("%q (hint %q), want no pid and a hint to wait", err, hint.Of(err))
	}
}
