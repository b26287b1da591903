package mcpserver_test

import (
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/receipts"
)

// TestClaimsOmittedBounded: a server that bounds its answers lists at most
// a page of the session's receipts that were not cited (the first issued),
// says how many more there are and still counts them all; without a bound
// it lists every one. Before session 27 the list grew with the session.
func TestClaimsOmittedBounded(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	bounded := p.serveWith(t, mcpserver.WithPageEntries(mcpserver.Options{ReceiptKey: key, Session: "omitted-1"}, 3))
	var ids []string
	for range 6 {
		ids = append(ids, str(t, bounded.ok(t, "readproof_resources_list", nil), "receipt_id"))
	}
	cite := map[string]any{"claims": "I relied on " + ids[0] + "."}

	rep := bounded.ok(t, "readproof_receipts_verify_claims", cite)
	omitted := list(t, rep["omitted"])
	if len(omitted) != 3 || num(t, rep, "omitted_more") != 2 || num(t, obj(t, rep["counts"]), "omitted") != 5 {
		t.Errorf("bounded at 3, 5 receipts not cited: omitted lists %d, omitted_more %v, counts.omitted %v; want 3, 2, 5",
			len(omitted), rep["omitted_more"], obj(t, rep["counts"])["omitted"])
	}
	for i, o := range omitted {
		if id := str(t, obj(t, o), "id"); id != ids[i+1] {
			t.Errorf("omitted[%d] is %s, want %s (the first issued)", i, id, ids[i+1])
		}
	}
	res := bounded.call(t, "readproof_receipts_verify_claims", cite)
	mustContain(t, "the summary", text(res), "6 receipts not cited", "omitted lists the first 3 of them; 3 more are not listed")

	unbounded := p.serveWith(t, mcpserver.Options{ReceiptKey: key, Session: "omitted-1"})
	rep = unbounded.ok(t, "readproof_receipts_verify_claims", cite)
	if n := len(list(t, rep["omitted"])); n != 7 || rep["omitted_more"] != nil {
		t.Errorf("without a bound, 7 receipts not cited: omitted lists %d, omitted_more %v", n, rep["omitted_more"])
	}
}
