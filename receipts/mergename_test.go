package receipts

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestMergeNamingReceiptIsNoAppend: readproof's merges name no receipt on
// their first line, and readers take the commit naming a receipt for its
// append commit. A merge written by hand that names a version 1 receipt
// (whose binding is its append commit's line) with another binding line
// would rebind it with no MAC to tell: CheckAdded reports the merge (pull,
// clone, the guard and verify refuse it), and Scan (receipts list) and
// BindingOf (receipts show, the index chain) pass it over, report the
// receipt, and read the binding of the commit that added it.
func TestMergeNamingReceiptIsNoAppend(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.ledger
	l.Bind = func(string) Binding { return Binding{Manifest: manifestA} }
	// y on x's index chain too, so both chains have a commit after x's
	x, y := f.sealV1(t, "x"), f.sealV1(t, "y")
	for indexRef(y.ID) != indexRef(x.ID) {
		y = f.sealV1(t, "y")
	}
	for _, r := range []Receipt{x, y} {
		if err := l.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	forged := appendMessage(x, Binding{Manifest: manifestB})
	for _, c := range []struct {
		ref, pre string
		path     []string
	}{{SessionRef("s"), "", sessionPath(x.ID)}, {indexRef(x.ID), "index ", indexPath(x.ID)}} {
		tip, err := l.ref(c.ref)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := f.store.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		xc, err := f.store.Commit(tc.Parents[0])
		if err != nil {
			t.Fatal(err)
		}
		m := f.rawCommit(t, tc.Tree, c.pre+forged, tip, tc.Parents[0])
		if err := f.store.Update(gitobj.RefUpdate{Name: c.ref, Old: tip, New: m}); err != nil {
			t.Fatal(err)
		}
		strays, err := CheckAdded(f.store.Tree, c.ref, []gitobj.OID{tc.Tree, xc.Tree}, tc.Tree, c.pre+forged)
		if err != nil || len(strays) != 1 || !strays[0].Unappended || strays[0].Path != strings.Join(c.path, "/") ||
			!strings.Contains(strays[0].Why, "a merge of 2 commits names receipt "+x.ID+" on its first line") {
			t.Errorf("%s: CheckAdded of the merge = %+v, %v; want the merge reported as naming %s", c.ref, strays, err, x.ID)
		}
	}
	entries, err := l.Scan("s")
	if err != nil || len(entries) != 2 {
		t.Fatalf("Scan = %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.ID != x.ID {
			continue
		}
		if e.Binding.Manifest != manifestA || !errors.Is(e.Err, ErrTampered) || !strings.Contains(e.Err.Error(), "is a merge of 2 commits") {
			t.Errorf("receipts list: x bound %+v (%v); want run-manifest %s, tampered by the merge", e.Binding, e.Err, manifestA)
		}
	}
	got, err := l.BindingOf(x)
	if got.Manifest != manifestA || !errors.Is(err, ErrTampered) || err == nil || !strings.Contains(err.Error(), "is a merge of 2 commits") {
		t.Errorf("BindingOf(x) = %+v, %v; want run-manifest %s, tampered by the merge", got, err, manifestA)
	}
}

// TestScanOtherSideAppend: a receipt a merge brought in is bound by its
// append commit on the merge's other side, found by a walk of that side;
// a commit there written by hand that names it without adding it (its
// tree is its parent's) is passed over and reported, as on the
// first-parent history, not taken for its append commit.
func TestScanOtherSideAppend(t *testing.T) {
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
	x, y := f.sealV1(t, "x"), f.sealV1(t, "y")
	tx, ty := put("", x), put("", y)
	a := f.rawCommit(t, tx, appendMessage(x, Binding{Manifest: manifestA}))
	b := f.rawCommit(t, ty, appendMessage(y, Binding{Manifest: manifestA}))
	forged := f.rawCommit(t, ty, appendMessage(y, Binding{Manifest: manifestB}), b)
	m := f.rawCommit(t, put(tx, y), "merge receipts of sessions/s\n", a, forged)
	if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), New: m}); err != nil {
		t.Fatal(err)
	}
	entries, err := l.Scan("s")
	if err != nil || len(entries) != 2 {
		t.Fatalf("Scan = %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.ID == y.ID && (e.Binding.Manifest != manifestA || !errors.Is(e.Err, ErrTampered) || !strings.Contains(e.Err.Error(), "commit "+string(forged)+" names it on its first line but its tree holds it with its parent's bytes")) {
			t.Errorf("receipt y, merged in: bound %+v (%v); want run-manifest %s, tampered by commit %s", e.Binding, e.Err, manifestA, forged)
		}
		if e.ID == x.ID && (e.Err != nil || e.Binding.Manifest != manifestA) {
			t.Errorf("receipt x: bound %+v (%v)", e.Binding, e.Err)
		}
	}
}
