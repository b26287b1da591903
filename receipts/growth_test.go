package receipts

import (
	"fmt"
	"slices"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestShrinks: a child that holds every path of its parent with the same
// blob (and more) shrinks nothing; a path it lacks, holds as another mode
// or with another blob is reported, in either order of the entries.
func TestShrinks(t *testing.T) {
	t.Parallel()
	trees := map[gitobj.OID][]gitobj.TreeEntry{
		"pleaf": {{Name: "rcpt_a.json", Mode: gitobj.ModeFile, OID: "ba"}, {Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bb"}},
		"p":     {{Name: "x", Mode: gitobj.ModeDir, OID: "pleaf"}, {Name: "y", Mode: gitobj.ModeDir, OID: "same"}},
		// grown: one receipt more, entries in reverse order
		"gleaf": {{Name: "rcpt_c.json", Mode: gitobj.ModeFile, OID: "bc"}, {Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bb"}, {Name: "rcpt_a.json", Mode: gitobj.ModeFile, OID: "ba"}},
		"g":     {{Name: "y", Mode: gitobj.ModeDir, OID: "same"}, {Name: "x", Mode: gitobj.ModeDir, OID: "gleaf"}},
		// shrunk: rcpt_a gone, rcpt_b another blob, y a file
		"sleaf": {{Name: "rcpt_b.json", Mode: gitobj.ModeFile, OID: "bB"}},
		"s":     {{Name: "x", Mode: gitobj.ModeDir, OID: "sleaf"}, {Name: "y", Mode: gitobj.ModeFile, OID: "same"}},
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if l, ok := trees[id]; ok {
			return l, nil
		}
		return nil, fmt.Errorf("no tree %s", id)
	}
	if got, err := Shrinks(list, "p", "g"); err != nil || len(got) != 0 {
		t.Fatalf("grown tree: %v, %v; want nothing", got, err)
	}
	got, err := Shrinks(list, "p", "s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Shrunk{{Path: "x/rcpt_a.json", Gone: true, Was: "ba"}, {Path: "x/rcpt_b.json", Was: "bb", Now: "bB"}, {Path: "y", Gone: true, Was: "same"}}
	if !slices.Equal(got, want) {
		t.Fatalf("shrunk tree: %+v, want %+v", got, want)
	}
	if got, err := Shrinks(list, "p", "p"); err != nil || len(got) != 0 {
		t.Fatalf("same tree: %v, %v", got, err)
	}
}

// BenchmarkShrinksAllGone: a child that lost every path of a 20,000-entry
// parent (what a hostile remote's receipt chain can send). Each lost path
// is looked up in an index of the child's names; a scan of the child for
// each made this quadratic (400 million name comparisons here).
func BenchmarkShrinksAllGone(b *testing.B) {
	const n = 20000
	parent, child := make([]gitobj.TreeEntry, n), make([]gitobj.TreeEntry, n)
	for i := range n {
		parent[i] = gitobj.TreeEntry{Name: fmt.Sprintf("a%06d", i), Mode: gitobj.ModeFile, OID: "x"}
		child[i] = gitobj.TreeEntry{Name: fmt.Sprintf("b%06d", i), Mode: gitobj.ModeFile, OID: "x"}
	}
	list := func(id gitobj.OID) ([]gitobj.TreeEntry, error) {
		if id == "p" {
			return parent, nil
		}
		return child, nil
	}
	b.ReportAllocs()
	for b.Loop() {
		got, err := Shrinks(list, "p", "c")
		if err != nil || len(got) != n {
			b.Fatalf("%d shrunk paths, %v; want %d", len(got), err, n)
		}
	}
}
