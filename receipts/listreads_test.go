package receipts

import (
	"strconv"
	"testing"

	"github.com/readproof/readproof/gitstore"
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

// TestListReadsOnlyTheTipsTrees: an append commit's parent tree is its own
// without the receipt it adds, so a chain of appends is checked on the
// tip's trees alone, the parents' tree ids computed instead of read. Before,
// each commit read its parent's root and a directory: 2 trees a receipt.
func TestListReadsOnlyTheTipsTrees(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 120
	for i := range n {
		f.issue(t, "s", "t"+strconv.Itoa(i))
	}
	tip, err := f.ledger.ref(SessionRef("s"))
	if err != nil {
		t.Fatal(err)
	}
	tc, err := f.store.Commit(tip)
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
	if err := count(tc.Tree); err != nil {
		t.Fatal(err)
	}
	counter := &treeCounter{Store: f.store}
	entries, err := NewLedger(counter).Scan("s")
	if err != nil || len(entries) != n {
		t.Fatalf("Scan = %d entries, %v", len(entries), err)
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Fatalf("receipt %s: %v", e.ID, e.Err)
		}
	}
	if counter.trees != tipTrees {
		t.Errorf("listing %d receipts read %d trees, want the tip's %d", n, counter.trees, tipTrees)
	}
}

func TestTreeIDIsGits(t *testing.T) {
	t.Parallel()
	store := gitstore.NewTestStore(t)
	blob, err := store.PutBlob([]byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	if id, ok := treeID(nil); !ok || id != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Errorf("treeID(empty) = %s, %v, want git's empty tree", id, ok)
	}
	var entries []gitobj.TreeEntry
	for i := range 40 {
		entries = append(entries, gitobj.TreeEntry{Name: "f" + strconv.Itoa(i) + ".json", Mode: gitobj.ModeFile, OID: blob})
		sub, err := store.PutTree(entries)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, gitobj.TreeEntry{Name: "d" + strconv.Itoa(i), Mode: gitobj.ModeDir, OID: sub})
		want, err := store.PutTree(entries)
		if err != nil {
			t.Fatal(err)
		}
		sorted, err := store.Tree(want)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := treeID(sorted); !ok || got != want {
			t.Fatalf("treeID of %d entries = %s, %v; git wrote %s", len(sorted), got, ok, want)
		}
	}
	if _, ok := treeID([]gitobj.TreeEntry{{Name: "a", Mode: gitobj.ModeFile, OID: "not an id"}}); ok {
		t.Error("treeID took an entry whose id is none")
	}
}

// commitCounter counts the reads of each commit through it.
type commitCounter struct {
	gitobj.Store
	reads map[gitobj.OID]int
}

func (c *commitCounter) Commit(id gitobj.OID) (gitobj.Commit, error) {
	c.reads[id]++
	return c.Store.Commit(id)
}

// TestScanReadsOtherSideCommitsOnce: on a merge's other side, Scan checks
// that the commit naming a receipt the merge brought in adds it to its
// parent's tree; the parent is the commit the walk takes next, or one of
// the first-parent history below the merge, and neither is read again.
// Before, the parent was read for its tree and again by the walk (or
// again after the first-parent history).
func TestScanReadsOtherSideCommitsOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.ledger
	put := func(tree gitobj.OID, r Receipt) gitobj.OID {
		t.Helper()
		blob, err := f.store.PutBlob(r.Encode())
		if err != nil {
			t.Fatal(err)
		}
		if tree, err = l.insert(tree, sessionPath(r.ID), blob); err != nil {
			t.Fatal(err)
		}
		return tree
	}
	x, y, z, w := f.sealV1(t, "x"), f.sealV1(t, "y"), f.sealV1(t, "z"), f.sealV1(t, "w")
	tx := put("", x)
	base := f.putCommit(t, tx, appendMessage(x, Binding{}))
	// first-parent side: z; other side: y on base, then w on y
	a := f.putCommit(t, put(tx, z), appendMessage(z, Binding{}), base)
	ty := put(tx, y)
	o1 := f.putCommit(t, ty, appendMessage(y, Binding{}), base)
	tw := put(ty, w)
	o2 := f.putCommit(t, tw, appendMessage(w, Binding{}), o1)
	m := f.putCommit(t, put(put(tw, z), x), "merge receipts of sessions/s\n", a, o2)
	if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), New: m}); err != nil {
		t.Fatal(err)
	}
	counter := &commitCounter{Store: f.store, reads: map[gitobj.OID]int{}}
	entries, err := NewLedger(counter).Scan("s")
	if err != nil || len(entries) != 4 {
		t.Fatalf("Scan = %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Errorf("receipt %s: %v", e.ID, e.Err)
		}
	}
	for name, c := range map[string]gitobj.OID{"the merge": m, "base": base, "a": a, "o1": o1, "o2": o2} {
		if n := counter.reads[c]; n != 1 {
			t.Errorf("Scan read %s (%s) %d times, want once", name, c, n)
		}
	}
}
