package mcpserver_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/receipts"
)

// TestHTTPReadTokenClaimsAcrossSessions: a read token checks its own
// receipts of any session by naming it, whatever server it asks: valid
// there, and answered as absent in a session that does not hold them. In
// every session, another caller's receipt gets the answer an id no receipt
// has, byte for byte but the id (in the claim and in the tool's text), and
// the receipts not cited are the token's own only.
func TestHTTPReadTokenClaimsAcrossSessions(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	a := p.tokenOf(t, "alice", mcpauth.ScopeWrite)
	b := p.tokenOf(t, "bob", mcpauth.ScopeRead)
	one := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "s-one"})
	two := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "s-two"})
	b1 := str(t, one.connect(t, b).ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	a1 := str(t, one.connect(t, a).ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	bs := two.connect(t, b)
	b2 := str(t, bs.ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	a2 := str(t, two.connect(t, a).ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	madeUp := "rcpt_" + strings.Repeat("a", 32)

	// ask claims of session in a call of the read token on server two:
	// each claim's JSON with its id blanked, and the text
	ask := func(session string, ids ...string) (map[string]string, map[string]any, string) {
		t.Helper()
		cited, _ := json.Marshal(ids)
		res := bs.call(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": string(cited), "session": session})
		if res.IsError {
			t.Fatalf("session %s: %v", session, res.Content)
		}
		m := res.StructuredContent.(map[string]any)
		got := map[string]string{}
		for _, c := range list(t, m["claims"]) {
			o := obj(t, c)
			id := str(t, o, "id")
			o["id"] = "ID"
			got[id] = jsonOf(o)
		}
		txt := ""
		for _, c := range res.Content {
			txt += jsonOf(c)
		}
		// (the call's own receipt, and in the server's session the
		// count of the token's receipts, which each call adds to)
		txt = regexp.MustCompile(`Receipt: rcpt_[0-9a-z]+`).ReplaceAllString(txt, "Receipt: R")
		if session == "s-two" {
			txt = regexp.MustCompile(`; \d+ receipts not cited`).ReplaceAllString(txt, "; N receipts not cited")
		}
		return got, m, txt
	}
	for _, c := range []struct {
		session      string
		own, foreign string // own: the token's receipt of session
		elsewhere    string // the token's receipt of the other session
	}{{"s-one", b1, a1, b2}, {"s-two", b2, a2, b1}} {
		got, m, _ := ask(c.session, c.own, c.foreign, madeUp, c.elsewhere)
		if !strings.Contains(got[c.own], `"verdict":"valid"`) {
			t.Errorf("session %s: the token's own receipt: %s", c.session, got[c.own])
		}
		if got[c.foreign] != got[madeUp] || !strings.Contains(got[madeUp], `"verdict":"fabricated"`) {
			t.Errorf("session %s: another caller's receipt\n%s\nan id no receipt has\n%s\nwant the same", c.session, got[c.foreign], got[madeUp])
		}
		if got[c.elsewhere] != got[madeUp] {
			t.Errorf("session %s: the token's receipt of the other session\n%s\nwant %s", c.session, got[c.elsewhere], got[madeUp])
		}
		if om := jsonOf(m["omitted"]); strings.Contains(om, c.foreign) || strings.Contains(om, "alice") {
			t.Errorf("session %s: omitted names another caller's receipt: %s", c.session, om)
		}
		// the text alike: one call citing the other caller's receipt,
		// one citing a made-up id
		_, _, withForeign := ask(c.session, c.own, c.foreign)
		_, _, withMadeUp := ask(c.session, c.own, madeUp)
		if strings.ReplaceAll(withForeign, c.foreign, "ID") != strings.ReplaceAll(withMadeUp, madeUp, "ID") {
			t.Errorf("session %s: the text told the ids apart:\n%s\n%s", c.session, withForeign, withMadeUp)
		}
	}
}
