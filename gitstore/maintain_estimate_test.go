package gitstore

import (
	"fmt"
	"path/filepath"
	"testing"
)

// TestEstimateLooseCountsMadeDirs: the loose-object estimate that counts
// the objects linked into fan-out directories this store created, without
// listing them, equals the estimate made by listing every directory, for
// directories made by these writes, directories that held other objects
// before, and directories written into by several flushes.
func TestEstimateLooseCountsMadeDirs(t *testing.T) {
	t.Parallel()
	s := looseWrites(NewTestStore(t))
	r := s.(*repo)
	objects := filepath.Join(s.Path(), "objects")
	// Objects of another writer, in some directories, before ours.
	var theirs []string
	for i := 0; i < 40; i++ {
		theirs = append(theirs, fmt.Sprintf("theirs %d", i))
	}
	gitHashObjects(t, s.Path(), theirs)
	for flush := 0; flush < 3; flush++ {
		for i := 0; i < 10; i++ { // loose: fewer than packThreshold a flush
			putBlob(t, s, fmt.Sprintf("ours %d %d", flush, i))
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		r.mu.Lock()
		dirs, made := r.looseDirs, r.madeDirs
		r.mu.Unlock()
		if len(made) == 0 {
			t.Fatalf("flush %d: no fan-out directory was made by the writes", flush)
		}
		got, want := estimateLoose(objects, dirs, made), estimateLoose(objects, dirs, nil)
		if got != want {
			t.Errorf("flush %d: estimate %d counting the directories made, %d listing them (dirs %v, made %v)", flush, got, want, dirs, made)
		}
	}
}
