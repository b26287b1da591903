package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/receipts"
)

// TestHTTPReadTokenClaimsLookUpNothingElse: a read token's claims do the
// same work for another client's receipt as for an id no receipt has:
// neither is looked up (its caller's receipts are found in the session's
// chain, read whole whatever is cited). Timing is not measured here; what
// it would measure is: with the index shard of another client's receipt
// (of another session) damaged, so that any look-up of an id in it fails,
// the read token's call is answered, both ids alike, while a write
// token's call, which looks them up, fails. Before session 29 a read
// token's claim of an id outside the session was looked up in the index,
// and one that existed was read, its binding walked and its MAC checked
// before it was answered as absent: its time told it existed, and with
// this damage the call failed for it and not for a made-up id.
func TestHTTPReadTokenClaimsLookUpNothingElse(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	a := p.tokenOf(t, "alice", mcpauth.ScopeWrite)
	b := p.tokenOf(t, "bob", mcpauth.ScopeRead)
	other := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "alice-1"})
	aliceID := str(t, other.connect(t, a).ok(t, mcpserver.ToolRunStart, map[string]any{"run_id": "secret-run"}), "receipt_id")
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "shared-1"})
	as, bs := srv.connect(t, a), srv.connect(t, b)
	bobID := str(t, bs.ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	// an id no receipt has, in the same index shard as alice's
	absent := aliceID[:len("rcpt_")+1] + strings.Repeat("a", 31)
	if absent == aliceID {
		absent = aliceID[:len("rcpt_")+1] + strings.Repeat("b", 31)
	}
	cited, _ := json.Marshal([]string{aliceID, absent, bobID})

	check := func(when string) {
		t.Helper()
		rep := bs.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": string(cited)})
		v := map[string]string{}
		for _, c := range list(t, rep["claims"]) {
			m := obj(t, c)
			v[str(t, m, "id")] = str(t, m, "verdict") + ": " + str(t, m, "detail")
		}
		if v[aliceID] != v[absent] || !strings.HasPrefix(v[absent], "fabricated") {
			t.Errorf("%s: another client's receipt got %q, an absent id %q: want the same answer", when, v[aliceID], v[absent])
		}
		if !strings.HasPrefix(v[bobID], "valid") {
			t.Errorf("%s: the read token's own receipt: %q", when, v[bobID])
		}
	}
	check("store whole")

	// alice's index shard now names an object the store does not have
	// (a loose ref overrides a packed one)
	ref := filepath.Join(p.store, filepath.FromSlash(receipts.IndexRefPrefix+aliceID[len("rcpt_"):len("rcpt_")+1]))
	if err := os.MkdirAll(filepath.Dir(ref), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ref, []byte(strings.Repeat("e", 40)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// the damage is there for whoever looks an id of that shard up
	as.fail(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": `["` + absent + `"]`})
	check("index shard damaged")
}
