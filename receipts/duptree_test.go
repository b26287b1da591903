package receipts

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestScanDuplicateEntryIsNoAppend: a commit written by hand whose tree
// holds its parent's receipt twice at its path (two entries of one name:
// git fsck reports it, readproof never writes it, the store reads it as
// given) names that receipt with another binding line. It adds nothing:
// the receipt it names is its parent's, with its parent's bytes. Its tree
// without the receipt's first entry is its parent's, so the shortcut that
// computes the parent's tree ids must not take it for an append; receipts
// list reports the commit and keeps the binding of the commit that added
// the receipt, as it did when it read the parent's trees.
func TestScanDuplicateEntryIsNoAppend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.ledger
	x := f.sealV1(t, "x")
	blob, err := f.store.PutBlob(x.Encode())
	if err != nil {
		t.Fatal(err)
	}
	tx, err := l.insert("", sessionPath(x.ID), blob)
	if err != nil {
		t.Fatal(err)
	}
	a := f.putCommit(t, tx, appendMessage(x, Binding{Manifest: manifestA}))
	// the trees along x's path, its leaf directory's entry doubled
	path := sessionPath(x.ID)
	trees := []gitobj.OID{tx}
	var entries [][]gitobj.TreeEntry
	for i := range path {
		es, err := f.store.Tree(trees[i])
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, es)
		if i+1 < len(path) {
			j := indexOfName(es, path[i])
			trees = append(trees, es[j].OID)
		}
	}
	leaf := entries[len(path)-1]
	j := indexOfName(leaf, path[len(path)-1])
	doubled := append(append(append([]gitobj.TreeEntry{}, leaf[:j+1]...), leaf[j]), leaf[j+1:]...)
	child := literalTree(t, f.store.Path(), doubled)
	for i := len(path) - 2; i >= 0; i-- {
		es := append([]gitobj.TreeEntry{}, entries[i]...)
		es[indexOfName(es, path[i])].OID = child
		if child, err = f.store.PutTree(es); err != nil {
			t.Fatal(err)
		}
	}
	forged := f.putCommit(t, child, appendMessage(x, Binding{Manifest: manifestB}), a)
	if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), New: forged}); err != nil {
		t.Fatal(err)
	}
	got, err := l.Scan("s")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range got {
		if e.ID == x.ID && (e.Binding.Manifest != manifestA || !errors.Is(e.Err, ErrTampered) || !strings.Contains(e.Err.Error(), "commit "+string(forged))) {
			t.Errorf("receipt x, named again by a commit whose tree holds it twice: bound %+v (%v); want run-manifest %s, tampered by commit %s", e.Binding, e.Err, manifestA, forged)
		}
	}
}

func indexOfName(es []gitobj.TreeEntry, name string) int {
	for i, e := range es {
		if e.Name == name {
			return i
		}
	}
	panic("no entry " + name)
}

// literalTree writes a tree object of entries as given (no check, no
// sort), as `git hash-object --literally` does.
func literalTree(t *testing.T, gitDir string, entries []gitobj.TreeEntry) gitobj.OID {
	t.Helper()
	content, ok := treeContent(entries)
	if !ok {
		t.Fatal("bad entry")
	}
	tmp := filepath.Join(t.TempDir(), "tree")
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		t.Fatal(err)
	}
	return gitobj.OID(git(t, gitDir, nil, "hash-object", "--literally", "-t", "tree", "-w", tmp))
}
