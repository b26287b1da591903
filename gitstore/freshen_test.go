package gitstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// packedStore returns a store holding one pack of n blobs ("packed i"),
// made old, and the pack's path.
func packedStore(t *testing.T, n int) (Store, string) {
	t.Helper()
	s := NewTestStore(t)
	for i := 0; i < n; i++ {
		putBlob(t, s, fmt.Sprintf("packed %d", i))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	packs, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs %v", packs)
	}
	age(t, packs[0], 48*time.Hour)
	return s, packs[0]
}

func forceRefresh(s Store) {
	r := s.(*repo)
	r.mu.Lock()
	r.packsCheckedAt = time.Time{}
	r.mu.Unlock()
}

func mtime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// TestFreshenPackedHoldsForItsPacks: reusing packed objects touches an old
// pack once; while the packs stay the ones it saw, more reuses write
// nothing loose and leave the pack's time alone (it is younger than
// freshenSlack), as the check made for each object did.
func TestFreshenPackedHoldsForItsPacks(t *testing.T) {
	t.Parallel()
	s, pack := packedStore(t, packThreshold+4)
	forceRefresh(s)
	id := putBlob(t, s, "packed 0")
	touched := mtime(t, pack)
	if time.Since(touched) > time.Minute {
		t.Fatalf("pack not freshened: %v", touched)
	}
	for i := 1; i < 10; i++ {
		putBlob(t, s, fmt.Sprintf("packed %d", i))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if got := mtime(t, pack); !got.Equal(touched) {
		t.Errorf("pack touched again (%v, first %v): it was younger than freshenSlack", got, touched)
	}
	if _, err := os.Lstat(loosePath(s, id)); err == nil {
		t.Error("a packed object was written loose")
	}
}

// TestFreshenPackedSeesNewPacks: a freshening holds only for the packs it
// saw. A cruft pack (with its .mtimes) that appears afterwards is not
// touched (git ages its objects by its .mtimes): an object that is also in
// another pack is freshened by touching that one, and one only in the
// cruft pack makes the next reuse write a loose copy, as git does; a new
// pack made old is touched.
func TestFreshenPackedSeesNewPacks(t *testing.T) {
	t.Parallel()
	s, pack := packedStore(t, packThreshold+4)
	forceRefresh(s)
	putBlob(t, s, "packed 0") // freshens the one pack
	// A cruft pack appears: a copy of the pack under another name, with
	// the .mtimes file git writes for cruft packs.
	dir := filepath.Dir(pack)
	cruft := filepath.Join(dir, "pack-"+strings.Repeat("c", 40))
	for _, ext := range []string{".pack", ".idx"} {
		data, err := os.ReadFile(strings.TrimSuffix(pack, ".pack") + ext)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(cruft+ext, data, 0o400); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(cruft+".mtimes", []byte("MTME"), 0o400); err != nil {
		t.Fatal(err)
	}
	age(t, pack, 48*time.Hour)
	age(t, cruft+".pack", 48*time.Hour)
	forceRefresh(s)
	id := putBlob(t, s, "packed 1")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(loosePath(s, id)); err == nil {
		t.Error("a reused object that a plain pack holds was written loose")
	}
	if time.Since(mtime(t, pack)) > time.Minute {
		t.Error("the plain pack that holds a reused object was not touched")
	}
	if time.Since(mtime(t, cruft+".pack")) < time.Minute {
		t.Error("a cruft pack was touched")
	}
	// The plain pack goes (as git gc replaces it): the objects are in the
	// cruft pack only, and a reuse writes a loose copy.
	saved := t.TempDir()
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Rename(strings.TrimSuffix(pack, ".pack")+ext, filepath.Join(saved, "p"+ext)); err != nil {
			t.Fatal(err)
		}
	}
	forceRefresh(s)
	id = putBlob(t, s, "packed 2")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(loosePath(s, id)); err != nil {
		t.Errorf("a reused object only a cruft pack holds is not written loose: %v", err)
	}
	// The plain pack back, without the cruft pack, and old again: the
	// next reuse touches it.
	for _, ext := range []string{".pack", ".idx"} {
		if err := os.Rename(filepath.Join(saved, "p"+ext), strings.TrimSuffix(pack, ".pack")+ext); err != nil {
			t.Fatal(err)
		}
	}
	for _, ext := range []string{".pack", ".idx", ".mtimes"} {
		os.Remove(cruft + ext)
	}
	age(t, pack, 48*time.Hour)
	forceRefresh(s)
	putBlob(t, s, "packed 3")
	if time.Since(mtime(t, pack)) > time.Minute {
		t.Error("an old pack was not touched after the packs changed")
	}
}

// TestLooseObjectFanoutDirIsAFile: a loose object whose fan-out directory
// is taken by a file is not written (the link into it fails), the error
// says which object, and no temporary file is left.
func TestLooseObjectFanoutDirIsAFile(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	id := OID(strings.TrimSpace(string(hashBlob(t, "in a file's place"))))
	fan := filepath.Join(s.Path(), "objects", string(id[:2]))
	if err := os.WriteFile(fan, []byte("not a directory"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutBlob([]byte("in a file's place")); err != nil {
		t.Fatal(err)
	}
	err := s.Sync()
	if err == nil || !strings.Contains(err.Error(), string(id)) {
		t.Fatalf("Sync = %v, want an error naming %s", err, id)
	}
	tmps, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "tmp_*"))
	if len(tmps) != 0 {
		t.Errorf("temporary files left: %v", tmps)
	}
}

// TestLooseObjectFanoutDirRemoved: a fan-out directory removed between two
// writes (git prune-packed removes empty ones) is created again.
func TestLooseObjectFanoutDirRemoved(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	a := putBlob(t, s, "first")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(loosePath(s, a)); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Dir(loosePath(s, a))); err != nil {
		t.Fatal(err)
	}
	if got := putBlob(t, s, "first"); got != a {
		t.Fatalf("PutBlob = %s, want %s", got, a)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	mustHave(t, s, a, true, "rewritten loose object")
}

// hashBlob is git hash-object of content (without writing it).
func hashBlob(t *testing.T, content string) []byte {
	t.Helper()
	cmd := GitCommand(t, t.TempDir(), "hash-object", "--stdin")
	cmd.Stdin = strings.NewReader(content)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
