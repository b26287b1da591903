package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// age sets the modification time of a loose object (or any file) back.
func age(t *testing.T, path string, by time.Duration) {
	t.Helper()
	old := time.Now().Add(-by)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// plantPackTemp writes a file named name into s's objects/pack, as a git
// at work or a killed one leaves it, last modified at mtime.
func plantPackTemp(t *testing.T, s Store, name string, mtime time.Time) string {
	t.Helper()
	dir := filepath.Join(s.Path(), "objects", "pack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte("a git at work, or left by one"), 0o400); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(p, mtime, mtime); err != nil {
		t.Fatal(err)
	}
	return p
}

func loosePath(s Store, id OID) string {
	return filepath.Join(s.Path(), "objects", string(id[:2]), string(id[2:]))
}

// mustHave checks presence with stock git, which reads the object
// directory afresh (an open Store may still hold the index of a pack gc
// just deleted).
func mustHave(t *testing.T, s Store, id OID, want bool, what string) {
	t.Helper()
	err := GitCommand(t, s.Path(), "cat-file", "-e", string(id)).Run()
	if (err == nil) != want {
		t.Fatalf("%s %s: present %v, want %v", what, id, err == nil, want)
	}
}

func putBlob(t *testing.T, s Store, content string) OID {
	t.Helper()
	id, err := s.PutBlob([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestGCKeepsYoungAndReachable(t *testing.T) {
	t.Parallel()
	s := looseWrites(NewTestStore(t)) // each object's own file, to age
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	tip := mkCommit(t, s, "reachable")
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: tip}); err != nil {
		t.Fatal(err)
	}
	c, _ := s.Commit(tip)
	oldGarbage := putBlob(t, s, "old garbage\n")
	youngGarbage := putBlob(t, s, "young garbage\n")
	reused := putBlob(t, s, "old, but written again by a writer about to reference it\n")
	if err := s.Sync(); err != nil { // write buffered objects out
		t.Fatal(err)
	}
	for _, id := range []OID{tip, c.Tree, oldGarbage, reused} {
		age(t, loosePath(s, id), 48*time.Hour)
	}
	// A writer puts the old object again: it is freshened, not skipped.
	if again := putBlob(t, s, "old, but written again by a writer about to reference it\n"); again != reused {
		t.Fatal("PutBlob of the same bytes gave another id")
	}

	res, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	mustHave(t, s, tip, true, "reachable commit")
	mustHave(t, s, c.Tree, true, "reachable tree")
	mustHave(t, s, youngGarbage, true, "unreachable object younger than the grace")
	mustHave(t, s, reused, true, "freshened object")
	mustHave(t, s, oldGarbage, false, "unreachable object older than the grace")
	// one pack of what is reachable, one cruft pack of the young
	// unreachable objects, nothing loose
	if res.After.Packs != 2 || res.After.Packed != 5 || res.After.Loose != 0 || res.Before.Loose < 6 {
		t.Errorf("gc stats before %+v after %+v", res.Before, res.After)
	}
	if _, err := os.Stat(loosePath(s, tip)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("reachable loose object was not packed: %v", err)
	}
	if d := time.Since(res.Cutoff); d < time.Hour-time.Minute || d > time.Hour+time.Minute {
		t.Errorf("cutoff %s is not an hour ago", res.Cutoff)
	}
	Fsck(t, s.Path())

	// The store keeps working after its objects moved into a pack.
	next := mkCommit(t, s, "after gc", tip)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", Old: tip, New: next}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Commit(tip); err != nil {
		t.Fatal(err)
	}
}

// TestGCFreshensPackedObjects: an object that only lives in a pack and has
// become unreachable is kept while a writer reuses it, and removed once it
// stays unused past the grace.
func TestGCFreshensPackedObjects(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	a := mkCommit(t, s, "packed a")
	b := mkCommit(t, s, "packed b")
	keep := mkCommit(t, s, "always reachable")
	if err := s.Update(RefUpdate{Name: "refs/heads/a", New: a}, RefUpdate{Name: "refs/heads/b", New: b}, RefUpdate{Name: "refs/heads/main", New: keep}); err != nil {
		t.Fatal(err)
	}
	if _, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour}); err != nil {
		t.Fatal(err)
	}
	// Both commits are now packed; drop both refs, and make the pack old.
	if err := s.Update(RefUpdate{Name: "refs/heads/a", Old: a}, RefUpdate{Name: "refs/heads/b", Old: b}); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v", packs)
	}
	age(t, packs[0], 48*time.Hour)
	// A writer reuses blob "packed a" (about to reference it again); its
	// pack index is current (a stale one would write a loose copy, which
	// is just as safe).
	r := s.(*repo)
	r.mu.Lock()
	r.packsCheckedAt = time.Time{}
	r.mu.Unlock()
	blobA := putBlob(t, s, "packed a")
	if fi, err := os.Stat(packs[0]); err != nil || time.Since(fi.ModTime()) > time.Minute {
		t.Fatalf("pack was not freshened: %v %v", fi.ModTime(), err)
	}
	if _, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour}); err != nil {
		t.Fatal(err)
	}
	mustHave(t, s, blobA, true, "reused packed object")
	mustHave(t, s, b, true, "unreachable object of a fresh pack (loosened, young)")
	// Nobody touches them for two days: the next gc removes them. (They
	// sit in a cruft pack, whose .mtimes holds their times: the clock
	// moves, not the files' times.)
	later := time.Now().Add(48 * time.Hour)
	if _, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour, Now: func() time.Time { return later }}); err != nil {
		t.Fatal(err)
	}
	mustHave(t, s, b, false, "unreachable object left alone past the grace")
	mustHave(t, s, blobA, false, "unreachable object left alone past the grace")
	mustHave(t, s, keep, true, "reachable commit")
	Fsck(t, s.Path())
}

func TestGCWithoutGit(t *testing.T) {
	s := NewTestStore(t)
	t.Setenv("PATH", t.TempDir())
	_, err := GC(context.Background(), s.Path(), GCOptions{})
	if !errors.Is(err, ErrGitMissing) || !strings.Contains(hint.Of(err), "install git") || strings.Contains(err.Error(), "install git") {
		t.Fatalf("err %v, want ErrGitMissing with a hint", err)
	}
}

func TestGCNotAStore(t *testing.T) {
	t.Parallel()
	if _, err := GC(context.Background(), t.TempDir(), GCOptions{}); err == nil {
		t.Fatal("gc of an empty directory succeeded")
	}
}

func lookGit() (string, error) { return exec.LookPath("git") }

// A writer holding packed-refs.lock for longer than git's default wait
// (one second) while its fsyncs drag on a busy disk does not fail a gc:
// git gc's pack-refs waits for the lock.
func TestGCWaitsForPackedRefsLock(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "x")})
	s.Close()
	lock := filepath.Join(s.Path(), "packed-refs.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	released := make(chan struct{})
	go func() {
		time.Sleep(1500 * time.Millisecond)
		os.Remove(lock)
		close(released)
	}()
	_, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour})
	<-released
	if err != nil {
		t.Fatalf("gc while a writer held packed-refs.lock for 1.5 s: %v", err)
	}
}

// TestGCInterrupted (session 17): a gc stopped by SIGINT or SIGTERM (its
// context cancelled) said "gc …: context canceled" with the hint to free
// space on the file system. It now says it was interrupted, that nothing
// was lost, and to run it again.
func TestGCInterrupted(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "one")})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := GC(ctx, s.Path(), GCOptions{Grace: time.Hour})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("GC with its context cancelled: %v, want an interrupted error wrapping context.Canceled", err)
	}
	if h := hint.Of(err); strings.Contains(h, "free space") || !strings.Contains(h, "nothing was lost") || !strings.Contains(h, "readproof gc") {
		t.Errorf("GC interrupted: hint %q, want nothing lost and to run readproof gc again", h)
	}
	Fsck(t, s.Path())
}

// TestGCRemovesKilledGitTemps (session 22): a git gc killed with readproof
// gc (SIGKILL of the process group) leaves objects/pack/tmp_pack_XXXXXX or
// .tmp-PID-pack-*, each a full copy of the store's packed objects. Before,
// the next `readproof gc` succeeded and kept them (only a later write's
// sweep removed them, and `verify` said "store ok"). A gc now removes
// stock git's temporary files older than the stale-lock age; a young one (a
// git at work) stays.
func TestGCRemovesKilledGitTemps(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "tip")}); err != nil {
		t.Fatal(err)
	}
	old, now := time.Now().Add(-2*time.Hour), time.Now()
	stale := []string{plantPackTemp(t, s, "tmp_pack_CiaWmt", old), plantPackTemp(t, s, "tmp_bitmap_fnNfgV", old),
		plantPackTemp(t, s, ".tmp-18761-pack-"+strings.Repeat("c", 40)+".pack", old)}
	young := plantPackTemp(t, s, "tmp_pack_EEHAhF", now)
	if _, err := GC(context.Background(), s.Path(), GCOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s, left by a killed git, is still there after gc", filepath.Base(p))
		}
	}
	if _, err := os.Stat(young); err != nil {
		t.Errorf("a young temporary file (a git at work) was removed: %v", err)
	}
}

// TestGCKeepsLiveFetchTemps (session 22): a pull's git fetch (or a user's)
// writes objects/pack/tmp_pack_XXXXXX while a gc runs in another process,
// and nothing keeps the two apart; on a slow network, or while index-pack
// resolves deltas, its file goes unwritten for longer than the stale-lock
// age (10s). Before, a gc that succeeded removed it, and the fetch failed
// at its rename. Git's temporary files now go only once an hour old (git
// prune waits for the grace), by GCOptions.Now's clock.
func TestGCKeepsLiveFetchTemps(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "tip")}); err != nil {
		t.Fatal(err)
	}
	check := func(clock time.Time, now func() time.Time) {
		t.Helper()
		live := plantPackTemp(t, s, "tmp_pack_Fe7chL", clock.Add(-30*time.Second))
		left := plantPackTemp(t, s, "tmp_pack_K1lled", clock.Add(-2*time.Hour))
		if _, err := GC(context.Background(), s.Path(), GCOptions{Now: now}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(live); err != nil {
			t.Errorf("gc removed the temporary pack of a live fetch, unwritten for 30s: %v", err)
		}
		if _, err := os.Stat(left); err == nil {
			t.Errorf("gc kept a temporary pack 2h old (clock %v), left by a killed git", clock.Format(time.RFC3339))
		}
		os.Remove(live)
		os.Remove(left)
	}
	check(time.Now(), nil)
	clock := time.Now().Add(48 * time.Hour)
	check(clock, func() time.Time { return clock })
}

// TestGCPacksRefsWithStoreLockAges (session 22): readproof gc packs the
// refs with the store's configured stale-lock age and lock timeout
// (READPROOF_STALE_LOCK_AGE, ...). Before, it opened the store with the
// defaults, so a packed-refs.lock 30 s old, a live writer's on a store
// configured for an hour, was broken as stale (10 s) under that writer.
func TestGCPacksRefsWithStoreLockAges(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "tip")}); err != nil {
		t.Fatal(err)
	}
	lock := filepath.Join(s.Path(), "packed-refs.lock")
	if err := os.WriteFile(lock, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	age(t, lock, 30*time.Second)
	_, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour, StaleLockAge: time.Hour, LockTimeout: 100 * time.Millisecond})
	if _, serr := os.Stat(lock); serr != nil {
		t.Errorf("gc with a stale-lock age of 1h broke a packed-refs.lock 30s old (gc: %v)", err)
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("gc with packed-refs.lock held past its lock timeout: %v, want ErrLocked", err)
	}
}
