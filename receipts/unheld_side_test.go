package receipts

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestScanUnheldOtherSide: a commit on a merge's other side that names a
// receipt neither the tip's tree nor its own holds is reported by Scan
// (receipts list) as one on the first-parent history is, in verify's
// words: whether the walk of the other side is needed for a receipt's
// append commit (y, appended there only) or not (every receipt appended
// on the first-parent history), reading each commit of the chain once.
// Before session 28 only the first-parent history was checked.
func TestScanUnheldOtherSide(t *testing.T) {
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
	bind := Binding{Manifest: manifestA}
	x, y, z := f.sealV1(t, "x"), f.sealV1(t, "y"), f.sealV1(t, "z") // z is in no tree
	tx := put("", x)
	txy := put(tx, y)
	a := f.putCommit(t, tx, appendMessage(x, bind))
	var chain []gitobj.OID // the commits of the chain, a and the case's
	commit := func(tree gitobj.OID, msg string, parents ...gitobj.OID) gitobj.OID {
		c := f.putCommit(t, tree, msg, parents...)
		chain = append(chain, c)
		return c
	}
	for _, c := range []struct {
		name string
		// first and other are the merge's parents, given a
		first, other func() gitobj.OID
	}{
		{"y appended on the other side", func() gitobj.OID { return a }, func() gitobj.OID {
			b := commit(txy, appendMessage(y, bind), a)
			return commit(txy, appendMessage(z, bind), b)
		}},
		{"every receipt appended on the first-parent history", func() gitobj.OID {
			return commit(txy, appendMessage(y, bind), a)
		}, func() gitobj.OID {
			return commit(tx, appendMessage(z, bind), a)
		}},
	} {
		chain = []gitobj.OID{a}
		m := commit(txy, "merge receipts of sessions/s\n", c.first(), c.other())
		old, err := l.ref(SessionRef("s"))
		if err != nil {
			t.Fatal(err)
		}
		if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), Old: old, New: m}); err != nil {
			t.Fatal(err)
		}
		counter := &commitCounter{Store: f.store, reads: map[gitobj.OID]int{}}
		entries, err := NewLedger(counter).Scan("s")
		if err != nil {
			t.Fatalf("%s: Scan: %v", c.name, err)
		}
		for _, id := range chain {
			if n := counter.reads[id]; n != 1 {
				t.Errorf("%s: Scan read commit %s %d times, want once", c.name, id, n)
			}
		}
		zPath := strings.Join(sessionPath(z.ID), "/")
		var found bool
		for _, e := range entries {
			switch e.ID {
			case x.ID, y.ID:
				if e.Err != nil || e.Binding.Manifest != manifestA {
					t.Errorf("%s: receipt %s bound %+v (%v)", c.name, e.ID, e.Binding, e.Err)
				}
			case zPath:
				found = true
				if !errors.Is(e.Err, ErrCorrupt) || !strings.Contains(e.Err.Error(), "names receipt "+z.ID+", which its tree does not hold") {
					t.Errorf("%s: the commit naming z reported as %v", c.name, e.Err)
				}
			default:
				t.Errorf("%s: an entry %s: %v", c.name, e.ID, e.Err)
			}
		}
		if !found || len(entries) != 3 {
			t.Errorf("%s: Scan = %d entries, the commit naming z reported: %v; want x, y and z's path", c.name, len(entries), found)
		}
	}
}

// TestScanNestedMergeReadsOnce: a merge's other side that holds a merge
// of its own (a chain that merged another before it was merged) is read
// each commit once too: o0 is the parent of both sides of the inner
// merge, walked before the second of them asks for its tree.
func TestScanNestedMergeReadsOnce(t *testing.T) {
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
	x, y, z, w, v := f.sealV1(t, "x"), f.sealV1(t, "y"), f.sealV1(t, "z"), f.sealV1(t, "w"), f.sealV1(t, "v")
	tx := put("", x)
	base := f.putCommit(t, tx, appendMessage(x, Binding{}))
	a := f.putCommit(t, put(tx, z), appendMessage(z, Binding{}), base)
	ty := put(tx, y)
	o0 := f.putCommit(t, ty, appendMessage(y, Binding{}), base)
	o1 := f.putCommit(t, put(ty, w), appendMessage(w, Binding{}), o0)
	o2 := f.putCommit(t, put(ty, v), appendMessage(v, Binding{}), o0)
	tyvw := put(put(ty, w), v)
	inner := f.putCommit(t, tyvw, "merge receipts of sessions/s\n", o1, o2)
	m := f.putCommit(t, put(tyvw, z), "merge receipts of sessions/s\n", a, inner)
	if err := f.store.Update(gitobj.RefUpdate{Name: SessionRef("s"), New: m}); err != nil {
		t.Fatal(err)
	}
	counter := &commitCounter{Store: f.store, reads: map[gitobj.OID]int{}}
	entries, err := NewLedger(counter).Scan("s")
	if err != nil || len(entries) != 5 {
		t.Fatalf("Scan = %+v, %v", entries, err)
	}
	for _, e := range entries {
		if e.Err != nil {
			t.Errorf("receipt %s: %v", e.ID, e.Err)
		}
	}
	for name, c := range map[string]gitobj.OID{"m": m, "a": a, "base": base, "inner": inner, "o0": o0, "o1": o1, "o2": o2} {
		if n := counter.reads[c]; n != 1 {
			t.Errorf("Scan read %s (%s) %d times, want once", name, c, n)
		}
	}
}
