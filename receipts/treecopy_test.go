package receipts

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestIsWithoutCopiesNoTree: walking a chain of appends from its tip, each
// commit's parent tree is computed by making over the tree computed for
// the commit before, not by copying it: the bytes allocated a commit do
// not grow with the tree (at 100,000 receipts the copies were about 1 GB
// allocated by `receipts list`). A tree of 400 receipts, taken out one
// at a time as the walk does, allocates a few hundred bytes a commit,
// against the tree's 28 KB a copy.
func TestIsWithoutCopiesNoTree(t *testing.T) {
	const n = 400
	entries := make([]gitobj.TreeEntry, n)
	for i := range entries {
		entries[i] = gitobj.TreeEntry{Name: fmt.Sprintf("r%04d.json", i), Mode: gitobj.ModeFile, OID: gitobj.OID(fmt.Sprintf("%040x", i+1))}
	}
	// the tree of the commit appending receipt k holds receipts k and
	// after: its parent's, receipts k+1 and after
	ids := make([]gitobj.OID, n)
	for k := range ids {
		id, ok := treeID(entries[k:])
		if !ok {
			t.Fatal("no tree id")
		}
		ids[k] = id
	}
	tc := newTreeCache(nil)
	levels := make([]listedTree, 1)
	path := make([]string, 1)
	step := func(k int) {
		levels[0] = listedTree{id: ids[k], entries: entries[k:]}
		if l, ok := tc.last[""]; ok && l.id == ids[k] {
			levels[0].entries = l.entries // as along finds it
		}
		path[0] = entries[k].Name
		if !tc.isWithout(ids[k+1], levels, path) {
			t.Fatalf("commit %d: its parent's tree not computed", k)
		}
	}
	step(0) // the tip's tree: copied once
	const steps = 200
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for k := 1; k <= steps; k++ {
		step(k)
	}
	runtime.ReadMemStats(&after)
	got := (after.TotalAlloc - before.TotalAlloc) / steps
	if got > 2<<10 {
		t.Errorf("a commit allocated %d bytes, want at most 2 KB (a copy of the tree is about 28 KB)", got)
	}
	if l := tc.last[""]; l.id != ids[steps+1] || len(l.entries) != n-steps-1 || contentID(l.content) != l.id {
		t.Errorf("the last tree kept is %s of %d entries, want %s of %d", l.id, len(l.entries), ids[steps+1], n-steps-1)
	}
}
