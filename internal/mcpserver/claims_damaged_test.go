package mcpserver_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/receipts"
)

// editReceipt replaces the stored bytes of receipt id in session's chain
// with edit's, through git plumbing and an index of our own, as anyone
// with write access to the store could.
func editReceipt(t *testing.T, p *project, session, id string, edit func(string) string) {
	t.Helper()
	ref := receipts.SessionRef(session)
	tip := gitOut(t, p, "", "rev-parse", ref)
	var path string
	for _, line := range strings.Split(gitOut(t, p, "", "ls-tree", "-r", "--name-only", tip), "\n") {
		if strings.HasSuffix(line, id+".json") {
			path = line
		}
	}
	if path == "" {
		t.Fatalf("no file of receipt %s in session %s's tree", id, session)
	}
	body := gitOut(t, p, "", "cat-file", "blob", tip+":"+path)
	edited := edit(body)
	if edited == body {
		t.Fatalf("receipt %s unchanged by the edit: %s", id, body)
	}
	blob := gitOut(t, p, edited, "hash-object", "-w", "--stdin")
	p.extra = append(p.extra, "GIT_INDEX_FILE="+filepath.Join(t.TempDir(), "index"))
	gitOut(t, p, "", "read-tree", tip)
	gitOut(t, p, "", "update-index", "--cacheinfo", "100644,"+blob+","+path)
	tree := gitOut(t, p, "", "write-tree")
	p.extra = p.extra[:len(p.extra)-1]
	gitOut(t, p, "", "update-ref", ref, gitOut(t, p, "", "commit-tree", "-p", tip, "-m", "edited", tree), tip)
}

// TestHTTPReadTokenOwnDamagedReceipts: a read token asking about its own
// receipts, damaged in the store, is told they are tampered, as the
// receipts docs name a record that exists but whose MAC or bytes fail:
// one edited (its MAC fails), one whose bytes no longer decode as a
// receipt but still name the token as its caller, cited or omitted. Its
// receipt damaged past naming anyone is no one's, answered as an id no
// receipt has; so is each of them to another read token. Before session
// 30 the one that did not decode was answered fabricated to its own
// token.
func TestHTTPReadTokenOwnDamagedReceipts(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	const session = "dmg-1"
	b := p.tokenOf(t, "bob", mcpauth.ScopeRead)
	c := p.tokenOf(t, "carol", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: session})
	bs, cs := srv.connect(t, b), srv.connect(t, c)
	var ids []string
	for range 4 {
		ids = append(ids, str(t, bs.ok(t, mcpserver.ToolResourcesList, nil), "receipt_id"))
	}
	edited, undecodable, garbage, omitted := ids[0], ids[1], ids[2], ids[3]
	editReceipt(t, p, session, edited, func(s string) string {
		return strings.Replace(s, `"tool":"`+mcpserver.ToolResourcesList+`"`, `"tool":"readproof_tag_set"`, 1)
	})
	for _, id := range []string{undecodable, omitted} {
		editReceipt(t, p, session, id, func(s string) string { return strings.Replace(s, `"v":2`, `"v":9`, 1) })
	}
	editReceipt(t, p, session, garbage, func(s string) string { return "not json" + s })

	cited, _ := json.Marshal([]string{edited, undecodable, garbage})
	verdicts := func(s *server) (map[string]string, map[string]string) {
		t.Helper()
		rep := s.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": string(cited)})
		claims, omit := map[string]string{}, map[string]string{}
		for _, x := range list(t, rep["claims"]) {
			m := obj(t, x)
			claims[str(t, m, "id")] = str(t, m, "verdict") + ": " + str(t, m, "detail")
		}
		for _, x := range list(t, rep["omitted"]) {
			m := obj(t, x)
			omit[str(t, m, "id")] = str(t, m, "verdict")
		}
		return claims, omit
	}
	absent := "fabricated: no receipt of this token with this id in session " + session
	own, omit := verdicts(bs)
	for _, id := range []string{edited, undecodable} {
		if !strings.HasPrefix(own[id], "tampered: ") {
			t.Errorf("the read token's own damaged receipt %s: %q, want tampered", id, own[id])
		}
	}
	if own[garbage] != absent {
		t.Errorf("its receipt that names no caller any more: %q, want %q", own[garbage], absent)
	}
	if omit[omitted] != "tampered" {
		t.Errorf("its damaged receipt not cited: omitted %v, want it tampered", omit)
	}
	other, omitOther := verdicts(cs)
	for _, id := range []string{edited, undecodable, garbage} {
		if other[id] != absent {
			t.Errorf("another read token's view of %s: %q, want %q", id, other[id], absent)
		}
	}
	for id := range omitOther {
		if id == omitted || id == edited || id == undecodable {
			t.Errorf("another read token is shown %s as omitted", id)
		}
	}
}
