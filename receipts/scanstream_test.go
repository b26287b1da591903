package receipts

import (
	"errors"
	"slices"
	"strconv"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// blobCounter counts the blobs (receipts) read through it.
type blobCounter struct {
	gitobj.Store
	blobs int
}

func (c *blobCounter) Blob(id gitobj.OID) ([]byte, error) {
	c.blobs++
	return c.Store.Blob(id)
}

// BlobAtMost counts as Blob does: receipts are read through it, bounded.
func (c *blobCounter) BlobAtMost(id gitobj.OID, max int64) ([]byte, error) {
	c.blobs++
	return c.Store.BlobAtMost(id, max)
}

// TestScanSessionReadsOneReceiptAtATime: ScanSession reads a session's
// chain without its receipts, and Each reads each receipt when its turn
// comes, so a listing of 100,000 receipts holds one at a time; Each gives
// Scan's entries, in Scan's order, as often as it is called, and stops at
// its function's first error.
func TestScanSessionReadsOneReceiptAtATime(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	const n = 40
	for i := range n {
		f.issue(t, "s", "t"+strconv.Itoa(i))
	}
	want, err := f.ledger.Scan("s")
	if err != nil || len(want) != n {
		t.Fatalf("Scan = %d entries, %v", len(want), err)
	}
	counter := &blobCounter{Store: f.store}
	sc, err := NewLedger(counter).ScanSession("s")
	if err != nil {
		t.Fatal(err)
	}
	if counter.blobs != 0 || sc.Len() != n {
		t.Fatalf("ScanSession read %d receipts (of %d) before any was asked for", counter.blobs, sc.Len())
	}
	for pass := range 2 {
		k := 0
		err := sc.Each(func(e Entry) error {
			if got := counter.blobs - pass*n; got != k+1 {
				t.Fatalf("pass %d: entry %d given with %d receipts read", pass, k, got)
			}
			if e.ID != want[k].ID || e.Err != nil || !e.Receipt.Equal(want[k].Receipt) || e.Binding != want[k].Binding {
				t.Fatalf("pass %d: entry %d is %s (%v), Scan's %s", pass, k, e.ID, e.Err, want[k].ID)
			}
			k++
			return nil
		})
		if err != nil || k != n {
			t.Fatalf("pass %d: %d entries, %v", pass, k, err)
		}
	}
	stop := errors.New("stop")
	var ids []string
	if err := sc.Each(func(e Entry) error {
		if ids = append(ids, e.ID); len(ids) == 3 {
			return stop
		}
		return nil
	}); err != stop || !slices.Equal(ids, []string{want[0].ID, want[1].ID, want[2].ID}) {
		t.Fatalf("Each stopped with %v after %v", err, ids)
	}
	if sc, err := f.ledger.ScanSession("none"); sc != nil || err != nil {
		t.Fatalf("a session without receipts: %v, %v", sc, err)
	}
}

// TestScanSessionPassesAgree: a receipt issued in the session after
// ScanSession read the chain is in none of Each's passes, so the two
// passes of `receipts list`'s table (widths, then lines) go over the same
// receipts, and a receipt's row is the same in both.
func TestScanSessionPassesAgree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for i := range 3 {
		f.issue(t, "s", "t"+strconv.Itoa(i))
	}
	sc, err := f.ledger.ScanSession("s")
	if err != nil {
		t.Fatal(err)
	}
	pass := func() []Entry {
		var got []Entry
		if err := sc.Each(func(e Entry) error { got = append(got, e); return nil }); err != nil {
			t.Fatal(err)
		}
		return got
	}
	first := pass()
	late := f.issue(t, "s", "a-tool-issued-between-the-passes")
	second := pass()
	if len(first) != 3 || len(second) != 3 || sc.Len() != 3 {
		t.Fatalf("passes of %d and %d entries (Len %d), want 3 each", len(first), len(second), sc.Len())
	}
	for k := range first {
		a, b := first[k], second[k]
		if a.ID != b.ID || a.Err != nil || b.Err != nil || !a.Receipt.Equal(b.Receipt) || a.Binding != b.Binding || b.ID == late.ID {
			t.Fatalf("entry %d: %s (%v) then %s (%v)", k, a.ID, a.Err, b.ID, b.Err)
		}
	}
}
