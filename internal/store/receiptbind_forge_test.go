package store

import (
	"context"
	"slices"
	"testing"

	"github.com/readproof/readproof/receipts"
)

// TestBindingDoesNotMoveReceiptToAnotherRunID: a receipt's binding is a
// line in its append commit's message, which no MAC covers and which a
// pull brings as the remote wrote it. A receipt issued under run id run-a
// whose append commit names run-b's manifest (a hostile remote's forged
// `run-manifest:`, fast-forwarded into the chain) is not counted for
// run-b: its MAC-covered run id never named that manifest, here or
// through a rename, so the binding cannot make a call made for one run
// verify as made for another.
func TestBindingDoesNotMoveReceiptToAnotherRunID(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	mb, _, err := f.s.RunOnce(ctx, "run-b", []string{"readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	key := testReceiptKey(t)
	own := issueFor(t, f.s.Receipts(), key, "run-b", "own")
	forged := receipts.NewLedger(f.s.Git())
	forged.Bind = func(string) receipts.Binding { return receipts.Binding{Manifest: mb.ID} }
	moved := issueFor(t, forged, key, "run-a", "made-for-run-a")

	rs, _, err := f.s.ManifestReceiptsChecked(mb)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range rs {
		ids = append(ids, r.ID)
	}
	if !slices.Equal(ids, []string{own.ID}) {
		t.Fatalf("run-b's receipts %v, want only %s: receipt %s of run-a counted for run-b by its binding alone", ids, own.ID, moved.ID)
	}
	if got, check := receiptSummary(t, f.s, key, "run-b"); !slices.Equal(got.IDs, []string{own.ID}) || !check.OK {
		t.Fatalf("run-b's bundle: summary %v, receipts check %+v", got.IDs, check)
	}
}
