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
