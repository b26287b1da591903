package receipts

import (
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestAppendCommitFirstParentFirst: after a merge of two histories that
// each append one receipt (a version 1 receipt, whose binding is its
// append commit's line), the append commit on the merge's first-parent
// side is the receipt's, however deep it is there and however near the
// other side's is (docs/receipts.md, "Storage"): BindingOf (the index
// chain, walkCommits first parent first) and Scan (the session chain's
// first-parent history) both read it. The same merge with its parents
// swapped reads the other one.
func TestAppendCommitFirstParentFirst(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.ledger
	// y shares x's index chain, so both chains have y's append on top of
	// x's on the first side
	x, y := f.sealV1(t, "x"), f.sealV1(t, "y")
	for indexRef(y.ID) != indexRef(x.ID) {
		y = f.sealV1(t, "y")
	}
	for _, c := range []struct {
		ref  string
		path func(string) []string
		pre  string
	}{{SessionRef("s"), sessionPath, ""}, {indexRef(x.ID), indexPath, "index "}} {
		put := func(tree gitobj.OID, r Receipt) gitobj.OID {
			t.Helper()
			blob, err := f.store.PutBlob(r.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if tree, err = l.insert(tree, c.path(r.ID), blob); err != nil {
				t.Fatal(err)
			}
			return tree
		}
		commit := func(tree, parent gitobj.OID, r Receipt, manifest string) gitobj.OID {
			t.Helper()
			oid, err := l.commit(tree, parent, c.pre+appendMessage(r, Binding{Manifest: manifest}))
			if err != nil {
				t.Fatal(err)
			}
			return oid
		}
		// first side: x bound to A, then y on top; other side: x bound to B
		tx := put("", x)
		a := commit(tx, "", x, manifestA)
		txy := put(tx, y)
		a2 := commit(txy, a, y, manifestA)
		b := commit(tx, "", x, manifestB)
		for _, order := range []struct {
			parents []gitobj.OID
			want    string
		}{{[]gitobj.OID{a2, b}, manifestA}, {[]gitobj.OID{b, a2}, manifestB}} {
			m := f.rawCommit(t, txy, "merge\n", order.parents...)
			old, err := l.ref(c.ref)
			if err != nil {
				t.Fatal(err)
			}
			if err := f.store.Update(gitobj.RefUpdate{Name: c.ref, Old: old, New: m}); err != nil {
				t.Fatal(err)
			}
			if c.ref == indexRef(x.ID) {
				if got, err := l.BindingOf(x); err != nil || got.Manifest != order.want {
					t.Errorf("index chain, merge of %v: BindingOf = %+v, %v; want run-manifest %s", order.parents, got, err, order.want)
				}
			}
			if c.ref == SessionRef("s") {
				entries, err := l.Scan("s")
				if err != nil || len(entries) != 2 {
					t.Fatalf("Scan = %+v, %v", entries, err)
				}
				for _, e := range entries {
					if e.ID == x.ID && (e.Err != nil || e.Binding.Manifest != order.want) {
						t.Errorf("session chain, merge of %v: receipt x bound %+v (%v); want run-manifest %s", order.parents, e.Binding, e.Err, order.want)
					}
				}
			}
		}
	}
}
