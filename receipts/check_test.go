package receipts

import (
	"strings"
	"testing"
)

// TestLedgerCheck (issue 13.1): Check decodes every receipt of the session
// and index chains and cross-checks them; an edit of either is named.
func TestLedgerCheck(t *testing.T) {
	f := newFixture(t)
	r := f.issue(t, "sess", "exec")
	keep := f.issue(t, "sess", "exec")
	f.issue(t, "other", "exec")
	if issues, err := f.ledger.Check(); err != nil || len(issues) != 0 {
		t.Fatalf("healthy ledger: %v, %v", issues, err)
	}
	// the session copy edited: it no longer is the index's blob
	edited := r
	edited.Tool = "something-else"
	rewriteReceipt(t, f.store.Path(), SessionRef("sess"), sessionBlobPath(r.ID), edited.Encode())
	// the index copy of another receipt replaced by garbage
	rewriteReceipt(t, f.store.Path(), indexRef(keep.ID), strings.Join(indexPath(keep.ID), "/"), []byte("not json"))
	issues, err := f.ledger.Check()
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for _, is := range issues {
		text = append(text, is.String())
	}
	all := strings.Join(text, "\n")
	if !strings.Contains(all, r.ID+": the index holds blob") || !strings.Contains(all, keep.ID+": the index holds blob") {
		t.Fatalf("want both edits named, got:\n%s", all)
	}
}
