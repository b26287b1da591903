package receipts

import (
	"strconv"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// treeCounter counts the trees read through it.
type treeCounter struct {
	gitobj.Store
	trees int
}

func (c *treeCounter) Tree(id gitobj.OID) ([]gitobj.TreeEntry, error) {
	c.trees++
	return c.Store.Tree(id)
}

// TestListReadsEachTreeOnce: listing a session checks that each append
// commit adds the receipt it names, which reads the trees at its path in
// the commit and its parent. Each is read once: the tip's trees, which
// most older commits share below the root, then about a root and a
// directory a commit (the parent's at a path is the next older commit's
// own). Before, the tip's trees were read again and the parent's read
// twice: about 3.8 trees a receipt at 500 receipts, not 3.
func TestListReadsEachTreeOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 200
	for i := range n {
		f.issue(t, "s", "t"+strconv.Itoa(i))
	}
	tip, err := f.ledger.ref(SessionRef("s"))
	if err != nil {
		t.Fatal(err)
	}
	tipTrees := 0
	var count func(gitobj.OID) error
	count = func(id gitobj.OID) error {
		tipTrees++
		entries, err := f.store.Tree(id)
		for _, e := range entries {
			if err == nil && e.Mode == gitobj.ModeDir {
				err = count(e.OID)
			}
		}
		return err
	}
	tc, err := f.store.Commit(tip)
	if err != nil || count(tc.Tree) != nil {
		t.Fatal(err)
	}
	counter := &treeCounter{Store: f.store}
	rs, err := NewLedger(counter).List("s")
	if err != nil || len(rs) != n {
		t.Fatalf("List = %d receipts, %v", len(rs), err)
	}
	// a root and a directory a commit beyond the tip's trees, and some
	// directories below the root that later appends changed
	if limit := tipTrees + 2*n + n/4; counter.trees > limit {
		t.Errorf("listing %d receipts read %d trees, more than %d (the tip's %d, then about 2 a commit)", n, counter.trees, limit, tipTrees)
	}
}
