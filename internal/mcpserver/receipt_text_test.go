package mcpserver_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/receipts"
)

// TestFailedCallReceiptIsWhatClientRead (session 28): the receipt of a
// failed call hashes as its result exactly the text the client read
// without its receipt line (the message and its hint line, as escaped
// and, over HTTP, with the server's paths hidden), and records it as its
// error on one line ("; " for the line break). Before, the
// receipt held the error's message alone (no hint), and over HTTP cleaned
// apart from what the client read.
func TestFailedCallReceiptIsWhatClientRead(t *testing.T) {
	t.Parallel()
	p, opts, _ := pathsProject(t)
	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeWrite)
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	// a run's ref held locked: the error names the lock file, its hint
	// the way to remove it
	lockRef := filepath.Join(p.store, filepath.FromSlash(store.OpenPrefix), "held.lock")
	if err := os.MkdirAll(filepath.Dir(lockRef), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lockRef, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	read := map[string]string{}
	for name, s := range map[string]*server{"http": remote, "stdio": local} {
		res, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "readproof_run_start", Arguments: map[string]any{"run_id": "held"}})
		if err != nil || !res.IsError {
			t.Fatalf("%s: run start on a locked ref: %v %v", name, err, res)
		}
		got := text(res)
		m := regexp.MustCompile(`\nreceipt: (rcpt_[0-9a-z]{32})$`).FindStringSubmatchIndex(got)
		if m == nil {
			t.Fatalf("%s: no receipt line in\n%s", name, got)
		}
		if !strings.Contains(got[:m[0]], "\nhint: ") {
			t.Fatalf("%s: no hint line in\n%s", name, got)
		}
		read[got[m[2]:m[3]]] = got[:m[0]]
	}
	st, err := opts.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Receipts().Scan(opts.Session)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, e := range entries {
		want, ok := read[e.ID]
		if !ok {
			continue
		}
		found++
		if e.Receipt.Error != strings.ReplaceAll(want, "\n", "; ") {
			t.Errorf("receipt %s (caller %q) records\n%s\nthe client read\n%s", e.ID, e.Receipt.Caller, e.Receipt.Error, want)
		}
		if receipts.BytesResult([]byte(want)).SHA256() != e.Receipt.ResultSHA256 {
			t.Errorf("receipt %s (caller %q) hashes another result than the text the client read", e.ID, e.Receipt.Caller)
		}
	}
	if found != 2 {
		t.Errorf("%d receipts of the two failed calls found, want 2", found)
	}
}
