package gitstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestIsOpenStoreMatchesIsStore: what an open store says of its marker is
// what IsStore says of its path, for a store made by Init, a bare
// repository made by git, a work tree's .git, a repository whose config has
// the marker set to something else, and one without objects/pack (which
// opening no longer creates: the first write does).
func TestIsOpenStoreMatchesIsStore(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	made := NewTestStore(t)
	made.Close()
	bare := filepath.Join(dir, "bare.git")
	gitInit(t, bare, "-q", "--bare")
	work := filepath.Join(dir, "work")
	gitInit(t, work, "-q")
	other := filepath.Join(dir, "other.git")
	gitInit(t, other, "-q", "--bare")
	git(t, other, "config", "readproof.store", "2")
	nopack := filepath.Join(dir, "nopack.git")
	gitInit(t, nopack, "-q", "--bare")
	git(t, nopack, "config", "readproof.store", "1")
	if err := os.RemoveAll(filepath.Join(nopack, "objects", "pack")); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{made.Path(), bare, work, other, nopack} {
		s, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if got, want := IsOpenStore(s), IsStore(path); got != want {
			t.Errorf("%s: IsOpenStore %v, IsStore %v", path, got, want)
		}
		s.Close()
	}
	// The store without objects/pack takes writes, loose and packed.
	s, err := Open(nopack)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := mkCommit(t, s, "into a store without objects/pack")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c})
	for i := 0; i < packThreshold+1; i++ {
		putBlob(t, s, string(rune('a'+i%26))+string(rune('0'+i/26)))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	Fsck(t, nopack)
}
