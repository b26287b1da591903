package store

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// heapAtReceipt is a store that measures the live heap each time a
// receipt's blob is read.
type heapAtReceipt struct {
	gitstore.Store
	heaps []uint64
}

func (h *heapAtReceipt) Blob(id gitstore.OID) ([]byte, error) {
	data, err := h.Store.Blob(id)
	if err == nil && bytes.HasPrefix(data, []byte(`{"v":`)) {
		h.heaps = append(h.heaps, liveHeap())
	}
	return data, err
}

// BlobAtMost measures as Blob does: the receipts are read through it.
func (h *heapAtReceipt) BlobAtMost(id gitstore.OID, max int64) ([]byte, error) {
	data, err := h.Store.BlobAtMost(id, max)
	if err == nil && bytes.HasPrefix(data, []byte(`{"v":`)) {
		h.heaps = append(h.heaps, liveHeap())
	}
	return data, err
}

// TestEvidenceReadsReceiptsOneAtATime: an export summarises the run's
// receipts as it reads them, one at a time, and the store checks of an
// export (and of evidence verify) compare them so: from the first
// receipt read to the last, the live heap grows by much less than the
// receipts read (200 receipts of about 1.3 KB each: before session 30 the
// export held every receipt of every session, and the checks every
// receipt of the run). The bundle's summary is the one receipts.Summary
// makes of the run's receipts. Not parallel: the heap is the process's.
func TestEvidenceReadsReceiptsOneAtATime(t *testing.T) {
	const n = 200
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	key, err := receipts.NewKey(bytes.Repeat([]byte{7}, receipts.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	issuer := receipts.NewIssuer(key, receipts.NewLedger(f.s.Git()))
	for i := 0; i < n; i++ {
		call := receipts.Call{Session: "s1", Run: "run-a", Tool: strings.Repeat("t", 128), Args: receipts.ArgvArgs([]string{"x"}),
			Result: receipts.CommandResult(nil, nil, 1, "").WithError(strings.Repeat("e", 1000)), Start: f.clock.Now(), End: f.clock.Now()}
		if _, err := issuer.Issue(context.Background(), call); err != nil {
			t.Fatal(err)
		}
	}
	want, err := f.s.RunReceipts("run-a")
	if err != nil || len(want) != n {
		t.Fatalf("%d receipts: %v", len(want), err)
	}
	h := &heapAtReceipt{Store: f.s.git}
	f.s.git = h
	grew := func(what string) {
		t.Helper()
		if len(h.heaps) < n {
			t.Fatalf("%s: %d receipts read, want %d", what, len(h.heaps), n)
		}
		first, last := h.heaps[0], h.heaps[n-1]
		t.Logf("%s: %d reads, heap %d -> %d", what, len(h.heaps), first, last)
		// the receipts read weigh 200 * 1.3 KB = 260 KB
		if last > first+100<<10 {
			t.Errorf("%s: the live heap grew by %d KB from the first receipt read to the last: the receipts are held", what, (last-first)>>10)
		}
		h.heaps = nil
	}
	in, err := f.s.EvidenceInput("run-a", EvidenceOptions{})
	if err != nil {
		t.Fatal(err)
	}
	grew("export")
	if sum, err := json.Marshal(receipts.Summary(want)); err != nil || !bytes.Equal(in.Receipts, sum) {
		t.Errorf("the bundle's receipt summary\n%s\nwant\n%s (%v)", in.Receipts, sum, err)
	}
	_, data := exportStatement(t, f.s, "run-a", false)
	h.heaps = nil
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{ReceiptsKey: &key})
	if err != nil || !rep.OK() {
		t.Fatalf("%v\n%s", err, rep.Listing())
	}
	grew("verify")
}
