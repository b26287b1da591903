package share

import (
	"fmt"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestParentsFirst: a pull checks the views of new journal commits parents
// first (so the document index it keeps in memory moves forward from one
// to the next, docs/store-format.md "Journal view"): every commit comes
// after each of its parents among the walked ones, once, whatever the
// shape (merges, a parent shared by both sides, parents not walked).
func TestParentsFirst(t *testing.T) {
	// tip = merge(l2, r2); l2 -> l1 -> base; r2 -> r1 -> base; r1 -> l1 too;
	// base's parent "old" was not walked (known locally).
	walked := map[gitstore.OID][]gitstore.OID{
		"tip":  {"l2", "r2"},
		"l2":   {"l1"},
		"l1":   {"base"},
		"r2":   {"r1"},
		"r1":   {"base", "l1"},
		"base": {"old"},
		"lost": {"base"}, // walked, not reachable from tip
	}
	order := parentsFirst("tip", walked)
	at := map[gitstore.OID]int{}
	for i, id := range order {
		if _, dup := at[id]; dup {
			t.Fatalf("%s twice in %v", id, order)
		}
		at[id] = i
	}
	if len(order) != 6 {
		t.Fatalf("order %v, want the 6 commits reachable from tip", order)
	}
	for id, ps := range walked {
		if id == "lost" {
			continue
		}
		for _, p := range ps {
			if i, ok := at[p]; ok && i > at[id] {
				t.Fatalf("%s comes after its child %s in %v", p, id, order)
			}
		}
	}
	// A long chain: no recursion depth to run out of.
	chain := map[gitstore.OID][]gitstore.OID{}
	for i := 1; i < 100000; i++ {
		chain[gitstore.OID(fmt.Sprint(i))] = []gitstore.OID{gitstore.OID(fmt.Sprint(i - 1))}
	}
	if got := parentsFirst("99999", chain); len(got) != 99999 || got[0] != "1" || got[len(got)-1] != "99999" {
		t.Fatalf("chain: %d commits, first %s", len(got), got[0])
	}
	if got := parentsFirst("unknown", walked); len(got) != 0 {
		t.Fatalf("a tip not walked: %v", got)
	}
}
