package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/receipts"
)

// TestClaimsBoundedPerCall: a server that bounds its answers (over HTTP by
// default) checks at most DefaultPageEntries cited receipt ids per call of
// readproof_receipts_verify_claims, and refuses more, saying how many and
// how to split them, before any is looked up. A read token's one call of
// 90,000 made-up ids (a 4 MiB body) was looked up id by id and answered
// 10.6 MB, raising the server's peak RSS from 52 MB to 225 MB (one of
// --max-concurrent such calls at once). Without a bound (stdio) every
// claim is checked, as before.
func TestClaimsBoundedPerCall(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, mcpserver.DefaultPageEntries+1)
	for i := range ids {
		ids[i] = fmt.Sprintf("rcpt_%032d", i)
	}
	all, _ := json.Marshal(ids)
	some, _ := json.Marshal(ids[:mcpserver.DefaultPageEntries])

	bounded := p.serveWith(t, mcpserver.Options{ReceiptKey: key, Session: "claims-1", MaxAnswerBytes: mcpserver.DefaultMaxAnswerBytes})
	msg := bounded.fail(t, "readproof_receipts_verify_claims", map[string]any{"claims": string(all)})
	mustContain(t, "1,001 claims", msg, "1001 receipt ids cited", "at most 1000 per call", "hint: check them in calls")
	rep := bounded.ok(t, "readproof_receipts_verify_claims", map[string]any{"claims": string(some)})
	if n := len(list(t, rep["claims"])); n != mcpserver.DefaultPageEntries {
		t.Errorf("1,000 claims: %d checked", n)
	}

	unbounded := p.serveWith(t, mcpserver.Options{ReceiptKey: key, Session: "claims-1"})
	rep = unbounded.ok(t, "readproof_receipts_verify_claims", map[string]any{"claims": string(all)})
	if n := len(list(t, rep["claims"])); n != len(ids) {
		t.Errorf("without a bound, 1,001 claims: %d checked", n)
	}
}
