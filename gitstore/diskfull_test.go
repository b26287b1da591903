package gitstore

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testproc"
)

// tmpFiles lists the temporary object files in a store.
func tmpFiles(t *testing.T, gitDir string) []string {
	t.Helper()
	var out []string
	for _, pat := range []string{"objects/pack/tmp_*", "objects/tmp_*", "objects/??/tmp_*"} {
		m, err := filepath.Glob(filepath.Join(gitDir, pat))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m...)
	}
	return out
}

// TestDiskFullLeavesNoTemporaryFiles (issue 13.5): each object write that
// fails with ENOSPC, loose or packed, removes its temporary file, and the
// error says the disk is full (errors.Is ENOSPC and ErrDiskFull) with a
// hint. Before the fix every failed loose write left objects/pack/tmp_obj_*.
func TestDiskFullLeavesNoTemporaryFiles(t *testing.T) {
	s := NewTestStore(t)
	writeFault = func(string) error { return syscall.ENOSPC }
	t.Cleanup(func() { writeFault = nil })

	for i := 0; i < 20; i++ {
		// One object: written loose at Sync.
		if _, err := s.PutBlob([]byte(fmt.Sprintf("document %d\n", i))); err != nil {
			t.Fatal(err)
		}
		err := s.Sync()
		if err == nil {
			t.Fatal("Sync on a full disk succeeded")
		}
		if !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, ErrDiskFull) {
			t.Fatalf("error %v does not match ENOSPC and ErrDiskFull", err)
		}
		if !strings.Contains(err.Error(), "disk is full") || !strings.Contains(hint.Of(err), "free space") {
			t.Fatalf("error %q, hint %q: want the disk named full and a hint", err, hint.Of(err))
		}
		if left := tmpFiles(t, s.Path()); len(left) > 0 {
			t.Fatalf("after failed loose write %d: %d temporary files left: %v", i, len(left), left)
		}
	}
	// Many objects at once: written as a pack.
	for i := 0; i < packThreshold+5; i++ {
		if _, err := s.PutBlob([]byte(fmt.Sprintf("packed %d\n", i))); err != nil && !errors.Is(err, syscall.ENOSPC) {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("pack write on a full disk: %v", err)
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("after a failed pack write: temporary files left: %v", left)
	}

	// Space again: the buffered objects are written, the store is sound.
	writeFault = nil
	id, err := s.PutBlob([]byte("after the disk was freed\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Blob(id); err != nil || string(got) != "after the disk was freed\n" {
		t.Fatalf("Blob = %q, %v", got, err)
	}
	Fsck(t, s.Path())
}

// TestDiskFullOnTmpfs repeats the check on a real full file system: a 1 MiB
// tmpfs (root only; skipped elsewhere). Not parallel: a process another
// test forks holds a copy of each open descriptor (the store's, inside the
// mount) until it execs, and an umount meanwhile fails as busy.
func TestDiskFullOnTmpfs(t *testing.T) {
	dir := testproc.SmallTmpfs(t, "1m")
	s, err := Init(filepath.Join(dir, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	big := make([]byte, 300<<10)
	var full error
	for i := 0; i < 40 && full == nil; i++ {
		rand.Read(big) // incompressible
		if _, err := s.PutBlob(append([]byte(nil), big...)); err != nil {
			full = err
			break
		}
		full = s.Sync()
	}
	if !errors.Is(full, syscall.ENOSPC) {
		t.Fatalf("writing until the tmpfs is full: %v, want ENOSPC", full)
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("temporary files left on the full disk: %v", left)
	}
}

// TestSweepStaleFiles (issue 13.5): temporary object files and lock files a
// killed writer left behind are removed by the next successful write once
// older than the stale-lock age; fresh ones (a writer at work) are kept.
func TestSweepStaleFiles(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	old := time.Now().Add(-time.Hour)
	stale := []string{
		"objects/pack/tmp_obj_123", "objects/pack/tmp_pack_abc", "objects/pack/tmp_idx_abc", "objects/tmp_obj_9",
		"refs/heads/readproof/runs/r1.lock", "packed-refs.lock", "HEAD.lock",
	}
	fresh := []string{"objects/pack/tmp_obj_fresh", "refs/heads/main.lock"}
	for _, f := range append(append([]string{}, stale...), fresh...) {
		p := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("left by a killed writer"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range stale {
		if err := os.Chtimes(filepath.Join(dir, f), old, old); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.PutBlob([]byte("the next write\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, f := range stale {
		if exists(filepath.Join(dir, f)) {
			t.Errorf("stale %s survived the next successful write", f)
		}
	}
	for _, f := range fresh {
		if !exists(filepath.Join(dir, f)) {
			t.Errorf("fresh %s was removed: a writer may still be using it", f)
		}
	}
}

// TestSweepWalksRefsRarely: every command is a new process, so the walk of
// refs/ for stale locks is bounded across processes by SweepStamp: a stale
// ref lock alone waits for the next walk (at most sweepEvery later), while a
// killed writer's temporary file, or a stamp older than sweepEvery, makes
// the next write walk refs/ at once.
func TestSweepWalksRefsRarely(t *testing.T) {
	t.Parallel()
	dir := NewTestStore(t).Path()
	old := time.Now().Add(-time.Hour)
	write := func(what string) { // one write by a new process
		t.Helper()
		s, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if _, err := s.PutBlob([]byte(what)); err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	plant := func(rel string) string {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("first\n") // walks refs/ and leaves the stamp
	if !exists(filepath.Join(dir, SweepStamp)) {
		t.Fatalf("no %s after the first write", SweepStamp)
	}
	lock := plant("refs/tags/readproof/runs/r2.lock")
	write("second\n")
	if !exists(lock) {
		t.Fatal("refs/ was walked again within sweepEvery with nothing stale elsewhere")
	}
	tmp := plant("objects/pack/tmp_obj_77")
	write("third\n")
	if exists(tmp) || exists(lock) {
		t.Fatalf("a killed writer's temporary file did not make the write walk refs/: tmp left %v, lock left %v", exists(tmp), exists(lock))
	}
	lock = plant("refs/heads/readproof/open/x.lock")
	if err := os.Chtimes(filepath.Join(dir, SweepStamp), old, old); err != nil {
		t.Fatal(err)
	}
	write("fourth\n")
	if exists(lock) {
		t.Fatal("a stamp older than sweepEvery did not make the write walk refs/")
	}
}

// TestDiskFullUpdateSaysSoOnce: an Update whose objects cannot be written
// (the disk is full) says so once, with the hint, and moves no ref (before
// session 14, with the hint every failed transaction now gets, the message
// said "the disk is full" twice: the object write's and the
// transaction's).
func TestDiskFullUpdateSaysSoOnce(t *testing.T) {
	s := NewTestStore(t)
	writeFault = func(string) error { return syscall.ENOSPC }
	t.Cleanup(func() { writeFault = nil })
	id, err := s.PutBlob([]byte("a document\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(RefUpdate{Name: "refs/heads/x", New: id})
	if !errors.Is(err, ErrDiskFull) || strings.Count(err.Error(), "disk is full") != 1 || !strings.Contains(hint.Of(err), "nothing was recorded") {
		t.Fatalf("Update on a full disk: %v (hint %q), want the disk named full once and the hint", err, hint.Of(err))
	}
	if refs, err := s.Refs("refs/"); err != nil || len(refs) != 0 {
		t.Fatalf("refs after the failed Update: %v (%v)", refs, err)
	}
}

// TestDiskFullAtIndexLeavesNoPack (session 22): a pack whose index cannot
// be written (the disk fills between the two) is removed with it. Before,
// the pack stayed in objects/pack without an index: space the full disk
// needed, never swept, and from then on every missing object's hint and
// `readproof verify` blamed it ("has no index ... git index-pack").
func TestDiskFullAtIndexLeavesNoPack(t *testing.T) {
	s := NewTestStore(t)
	writeFault = func(name string) error {
		if strings.HasPrefix(filepath.Base(name), "tmp_idx_") {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { writeFault = nil })
	for i := 0; i < packThreshold+5; i++ {
		if _, err := s.PutBlob([]byte(fmt.Sprintf("packed at a full disk %d\n", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("pack write with its index on a full disk: %v", err)
	}
	if left := UnindexedPacks(s.Path()); len(left) > 0 {
		t.Fatalf("a pack without its index is left after the failed write: %v", left)
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
	writeFault = nil
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	Fsck(t, s.Path())
}

// TestDiskFullAtIndexLeavesAnotherWritersPack: two writers of the same
// objects at the same moment (two agents reading one unchanged document in
// one second) publish the same pack under the same name. When the other
// has renamed its pack into place but not yet its index, and this one's
// index cannot be written, this one must not remove the pack: the other's
// index would follow it and name objects no file holds. Set up here as the
// other writer mid-way: the pack of a first write in place, its index not.
func TestDiskFullAtIndexLeavesAnotherWritersPack(t *testing.T) {
	s := NewTestStore(t)
	blobs := func() {
		for i := 0; i < packThreshold+5; i++ {
			if _, err := s.PutBlob([]byte(fmt.Sprintf("written twice at once %d\n", i))); err != nil {
				t.Fatal(err)
			}
		}
	}
	blobs()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	idx, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "pack-*.idx"))
	if len(idx) != 1 {
		t.Fatalf("want one pack index, have %v", idx)
	}
	pack := strings.TrimSuffix(idx[0], ".idx") + ".pack"
	other, err := os.ReadFile(idx[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(idx[0]); err != nil { // the other writer's index: not yet renamed
		t.Fatal(err)
	}
	s2, err := Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s2.Close() })
	writeFault = func(name string) error {
		if strings.HasPrefix(filepath.Base(name), "tmp_idx_") {
			return syscall.ENOSPC
		}
		return nil
	}
	t.Cleanup(func() { writeFault = nil })
	s = s2
	blobs()
	if err := s.Sync(); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("the second write of the same pack, its index on a full disk: %v", err)
	}
	writeFault = nil
	if _, err := os.Stat(pack); err != nil {
		t.Fatalf("the other writer's pack was removed by the failed write: %v", err)
	}
	// the other writer renames its index into place: the store is whole
	if err := os.WriteFile(idx[0], other, 0o400); err != nil {
		t.Fatal(err)
	}
	Fsck(t, s.Path())
}

// TestOutOfSpaceRemovesRepackTemps (session 22): git repack writes its new
// pack as objects/pack/.tmp-PID-pack-HASH.pack (and .idx, .bitmap) and
// renames it into place at the end; when the disk fills after the pack is
// complete (at its bitmap, on a 2 MiB tmpfs), git dies and leaves that
// pack, a full copy of the store's objects, which no later gc or sweep
// removed: the disk stayed full. A git that runs out of space now takes
// its .tmp-PID-pack-* files with it, as it takes tmp_pack_XXXXXX ones;
// files that were there before stay.
func TestOutOfSpaceRemovesRepackTemps(t *testing.T) {
	s := NewTestStore(t)
	dir := filepath.Join(s.Path(), "objects", "pack")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, ".tmp-41-pack-"+strings.Repeat("a", 40)+".pack")
	if err := os.WriteFile(other, []byte("another git's"), 0o600); err != nil {
		t.Fatal(err)
	}
	var left []string
	err := removingGitTemps(s.Path(), func() error {
		for _, ext := range []string{".pack", ".idx", ".bitmap"} {
			name := filepath.Join(dir, ".tmp-4242-pack-"+strings.Repeat("b", 40)+ext)
			if err := os.WriteFile(name, []byte("partial"), 0o400); err != nil {
				t.Fatal(err)
			}
			left = append(left, name)
		}
		return errors.New("git gc: fatal: sha1 file '" + dir + "/tmp_bitmap_3Hbogs' write error. Out of diskspace; fatal: failed to run repack")
	})
	if err == nil {
		t.Fatal("the failure was lost")
	}
	for _, name := range left {
		if _, err := os.Stat(name); err == nil {
			t.Errorf("%s is left after git ran out of space", filepath.Base(name))
		}
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a file that was there before was removed: %v", err)
	}
}

// TestFileTooLargeSaysWhichLimit (session 22): a write past the process's
// file size limit (ulimit -f, EFBIG with SIGXFSZ ignored as Go does) was
// "the file system failed (dmesg may say why) ... repair it": nothing is
// broken, a limit is set. The hint names the limit and that nothing was
// recorded.
func TestFileTooLargeSaysWhichLimit(t *testing.T) {
	s := NewTestStore(t)
	writeFault = func(string) error { return syscall.EFBIG }
	t.Cleanup(func() { writeFault = nil })
	id, err := s.PutBlob([]byte("a document\n"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Update(RefUpdate{Name: "refs/heads/x", New: id})
	if !errors.Is(err, syscall.EFBIG) || !strings.Contains(hint.Of(err), "ulimit -f") || !strings.Contains(hint.Of(err), "nothing was recorded") ||
		strings.Contains(hint.Of(err), "dmesg") {
		t.Fatalf("Update past the file size limit: %v (hint %q), want a hint naming ulimit -f", err, hint.Of(err))
	}
	if left := tmpFiles(t, s.Path()); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}
}

// TestSweepKeepsLiveFetchTemps (session 22): a pull's git fetch (or a
// user's) writes objects/pack/tmp_pack_XXXXXX while another readproof
// process writes, and its file can go unwritten for longer than the
// stale-lock age (a stalled network, index-pack resolving deltas). Before,
// that writer's sweep removed it and the fetch failed at its rename. Stock
// git's temporary files now go only once gitTempAge old; readproof's own
// (tmp_obj_ and the like, TestSweepStaleFiles) still at the stale-lock age.
func TestSweepKeepsLiveFetchTemps(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	recent, old := time.Now().Add(-30*time.Second), time.Now().Add(-gitTempAge-time.Hour)
	live := []string{plantPackTemp(t, s, "tmp_pack_Fe7chL", recent), plantPackTemp(t, s, "tmp_idx_Fe7chL", recent)}
	left := plantPackTemp(t, s, "tmp_pack_K1lled", old)
	if _, err := s.PutBlob([]byte("the next write\n")); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, p := range live {
		if !exists(p) {
			t.Errorf("a write's sweep removed %s of a live git fetch, unwritten for 30s", filepath.Base(p))
		}
	}
	if exists(left) {
		t.Errorf("a write's sweep kept %s, left by a killed git %v ago", filepath.Base(left), gitTempAge+time.Hour)
	}
}

// TestWriteLimitRemedy: one clause for every local write that hit a limit,
// from an errno or from git's words, and none for other errors.
func TestWriteLimitRemedy(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC}, "the file system that holds the store is full (or the quota is used up); free space on it (df shows it)"},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.EDQUOT}, "free space on it"},
		{errors.New("fatal: write error: No space left on device"), "free space on it"},
		{errors.New("fatal: Out of diskspace"), "free space on it"},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.EFBIG}, "a file passed the file size limit (the shell's `ulimit -f`) or the largest file the file system allows; raise the limit (ulimit -f unlimited)"},
		{errors.New("fatal: index-pack died of signal 25"), "a file passed the file size limit (the shell's `ulimit -f`); raise it (ulimit -f unlimited)"},
		{&fs.PathError{Op: "write", Path: "x", Err: syscall.EIO}, ""},
		{nil, ""},
	} {
		if got := WriteLimitRemedy(tc.err, "the store"); (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("WriteLimitRemedy(%v) = %q, want %q", tc.err, got, tc.want)
		}
	}
}
