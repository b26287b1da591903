package store

import (
	"context"
	"slices"
	"strings"
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

// TestUnreadableReceiptOfOtherManifestNoSummary: a manifest with no
// receipts of its own exports no receipt summary; verifying that bundle
// does not fail on an unreadable receipt issued for another manifest of
// its run id (a pull's run conflict), as export did not, and as the check
// of a bundle that carries a summary does not.
func TestUnreadableReceiptOfOtherManifestNoSummary(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "r1", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	key := testReceiptKey(t)
	elsewhere := receipts.NewLedger(f.s.Git())
	elsewhere.Bind = func(string) receipts.Binding { return receipts.Binding{Manifest: strings.Repeat("ab", 20)} }
	theirs := issueFor(t, elsewhere, key, "r1", "theirs")
	breakReceipt(t, f, "s1", theirs.ID)
	data, _, err := f.s.ExportEvidence("r1", EvidenceOptions{ExporterVersion: "test"})
	if err != nil {
		t.Fatalf("export: %v", err)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{ReceiptsKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	if c := checkNamed(rep, CheckReceipts); c != nil {
		t.Fatalf("another manifest's unreadable receipt fails this one's bundle, which export wrote without a summary: %+v\n%s", *c, rep.Listing())
	}
}
