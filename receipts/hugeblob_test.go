package receipts

import (
	"bytes"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// wholeReads counts the blobs read whole (Blob) through it, by id.
type wholeReads struct {
	gitobj.Store
	read map[gitobj.OID]int
}

func (w *wholeReads) Blob(id gitobj.OID) ([]byte, error) {
	w.read[id]++
	return w.Store.Blob(id)
}

// TestReadReceiptBoundsTheBlob: a receipt blob of a session chain or an
// index chain larger than a receipt may be (MaxEncodedLen, a pulled store
// can hold one of gigabytes) is refused from its stated size, before its
// content is read, as ErrCorrupt naming the receipt and the bound; the
// other receipts are read as before.
func TestReadReceiptBoundsTheBlob(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	big := f.issue(t, "s", "big")
	keep := f.issue(t, "s", "keep")
	// The receipt's own JSON, padded past the bound with spaces.
	huge := append(bytes.TrimSuffix(big.Encode(), []byte("}\n")), []byte(strings.Repeat(" ", 4*MaxEncodedLen)+"}\n")...)
	hugeBlob, err := f.store.PutBlob(huge)
	if err != nil {
		t.Fatal(err)
	}
	rewriteReceipt(t, f.store.Path(), SessionRef("s"), sessionBlobPath(big.ID), huge)
	rewriteReceipt(t, f.store.Path(), indexRef(big.ID), indexBlobPath(big.ID), huge)

	w := &wholeReads{Store: f.store, read: map[gitobj.OID]int{}}
	l := NewLedger(w)
	entries, err := l.Scan("s")
	if err != nil || len(entries) != 2 {
		t.Fatalf("Scan = %d entries, %v", len(entries), err)
	}
	bound := strconv.Itoa(MaxEncodedLen)
	for _, e := range entries {
		switch e.ID {
		case big.ID:
			if !errors.Is(e.Err, ErrCorrupt) || !strings.Contains(e.Err.Error(), big.ID) || !strings.Contains(e.Err.Error(), bound) {
				t.Errorf("huge receipt: %v, want ErrCorrupt naming %s and %s bytes", e.Err, big.ID, bound)
			}
		case keep.ID:
			if e.Err != nil {
				t.Errorf("other receipt: %v", e.Err)
			}
		}
	}
	_, err = l.Get(big.ID)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), bound) {
		t.Errorf("Get of the huge receipt = %v, want ErrCorrupt naming %s bytes", err, bound)
	}
	if n := w.read[hugeBlob]; n != 0 {
		t.Errorf("the huge blob was read whole %d times, want none", n)
	}
}
