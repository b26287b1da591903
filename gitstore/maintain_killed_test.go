package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// A pass killed while it removes the small packs it packed (each pack
// before its index, git's order) leaves indexes whose pack is gone, their
// objects in the pass's new pack. The next pass runs, and a process
// opened afterwards reads every commit from the new pack, as git does (it
// ignores an index without its pack), also when the orphan index looks
// newer than the new pack (the store copied by cp -r, which gives each
// file its copy's time). Before, every pass failed until the indexes were
// half an hour old (removeOrphanPacks), and in the copy every read of
// those commits said "object not found".
func TestPassKilledBetweenPackAndIndex(t *testing.T) {
	t.Parallel()
	for _, copied := range []bool{false, true} {
		t.Run(map[bool]string{false: "as killed", true: "copied"}[copied], func(t *testing.T) {
			t.Parallel()
			passKilledBetweenPackAndIndex(t, copied)
		})
	}
}

func passKilledBetweenPackAndIndex(t *testing.T, copied bool) {
	s, dir := passOnlyByTest(t)
	var commits []OID
	for i := 0; i < 4; i++ {
		commits = append(commits, smallWrite(t, s, i))
	}
	idxs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.idx"))
	if err != nil || len(idxs) != 4 {
		t.Fatalf("indexes %v (%v); want the 4 small packs'", idxs, err)
	}
	saved := map[string][]byte{}
	for _, p := range idxs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		saved[p] = b
	}
	written := time.Now().Add(-time.Minute)
	if copied {
		written = time.Now().Add(time.Minute)
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	s.Close()
	// the state a kill after each pack's unlink, before its index's, leaves
	for p, b := range saved {
		if fileExists(p) {
			t.Fatalf("small pack index %s not removed by the pass", p)
		}
		if err := os.WriteFile(p, b, 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, written, written); err != nil { // older than the pass's pack, or newer in the copy
			t.Fatal(err)
		}
	}
	r := reopen(t, dir).(*repo)
	for _, c := range commits {
		if _, err := r.Commit(c); err != nil {
			t.Errorf("commit %s after the killed pass: %v", c, err)
		}
	}
	if !r.maintain(context.Background()) {
		t.Error("the pass after the killed one failed")
	}
	r.Close()
	Fsck(t, dir)
}
