package gitstore

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestFanoutListedForBatches: past the first few fan-out directories a
// batch looks for, objects/ is listed once instead; loose objects another
// writer left in any of those directories are still found and freshened
// (not written again), whichever way their directory was looked for.
func TestFanoutListedForBatches(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	var theirs []string
	for i := 0; i < 40; i++ {
		theirs = append(theirs, fmt.Sprintf("theirs %d", i))
	}
	ids := gitHashObjects(t, s.Path(), theirs)
	for _, id := range ids {
		age(t, loosePath(s, id), 48*time.Hour)
	}
	for i := 0; i < 40; i++ {
		if got := putBlob(t, s, fmt.Sprintf("ours %d", i)); got == "" {
			t.Fatal("no id")
		}
		if got := putBlob(t, s, fmt.Sprintf("theirs %d", i)); got != ids[i] {
			t.Fatalf("PutBlob = %s, want %s", got, ids[i])
		}
	}
	if r := s.(*repo); r.fanLooks <= fanoutLstats {
		t.Fatalf("%d fan-out looks: objects/ was never listed", r.fanLooks)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		fi, err := os.Stat(loosePath(s, id))
		if err != nil {
			t.Fatal(err)
		}
		if time.Since(fi.ModTime()) > time.Hour {
			t.Errorf("%s: loose object left alone (not freshened): %v", id, fi.ModTime())
		}
	}
	Fsck(t, s.Path())
}
