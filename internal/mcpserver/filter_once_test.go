package mcpserver

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// TestErrorsWordedOnce: every JSON-RPC error a client over HTTP reads goes
// through the path filter once, then is escaped once: rpcError's and
// resourceError's (resources/list, resources/read), argumentHints' unknown
// tool, and an error of the SDK's or a handler's own. Each first directory
// a text names is looked up once (a path of this machine, hidden, and
// one that only looks like a path, kept). Before session 29 codedErrors worded
// rpcError's and resourceError's messages a second time, after they were
// escaped (each path looked up twice, up to 32 stats more per error), left
// argumentHints' to be worded only after its escaping, and did not escape
// the rest (a control character in a handler's error reached the client).
func TestErrorsWordedOnce(t *testing.T) {
	s, err := New(Options{Open: func() (*store.Store, error) { return nil, errors.New("unused") }})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	looks := map[string]int{}
	s.lookFor = func(top string) bool {
		mu.Lock()
		looks[top]++
		mu.Unlock()
		return top == "/srvx"
	}
	extra := &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "w", Scopes: []string{ScopeWrite}}}
	cause := hint.With(errors.New("open\t/srvx/data/a.lock: exists, as /api/v1 says"), "remove /srvx/data/a.lock")
	for _, c := range []struct {
		what string
		req  mcp.Request
		err  func(clean func(string) string) error
		want string
	}{
		{"rpcError", &mcp.ListResourcesRequest{Extra: extra}, func(clean func(string) string) error { return rpcError(cause, clean) },
			`open\ta.lock: exists, as /api/v1 says (hint: remove a.lock)`},
		{"resourceNotFound", &mcp.ReadResourceRequest{Extra: extra}, func(clean func(string) string) error {
			return resourceNotFound("readproof://d/x", errors.Join(store.ErrNotRegistered, cause), clean)
		}, "Resource not found: not registered: "},
		{"a handler's own error", &mcp.ReadResourceRequest{Extra: extra}, func(func(string) string) error { return cause },
			`open\ta.lock: exists, as /api/v1 says`},
		{"an SDK error", &mcp.ReadResourceRequest{Extra: extra}, func(func(string) string) error {
			return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad\x1b[2J /srvx/data/b.md, as /api/v1 says"}
		}, `bad\x1b[2J b.md, as /api/v1 says`},
	} {
		clear(looks)
		h := s.codedErrors(func(context.Context, string, mcp.Request) (mcp.Result, error) {
			return nil, c.err(s.forClient(c.req))
		})
		_, err := h(context.Background(), "resources/read", c.req)
		var we *jsonrpc.Error
		if !errors.As(err, &we) || !strings.Contains(we.Message, c.want) {
			t.Errorf("%s: got %v, want a JSON-RPC error with %q", c.what, err, c.want)
			continue
		}
		if strings.Contains(we.Message, "/srvx") {
			t.Errorf("%s: a path of the server is shown: %q", c.what, we.Message)
		}
		for _, top := range []string{"/srvx", "/api"} {
			if looks[top] != 1 {
				t.Errorf("%s: %s looked up %d times, want once (the text worded once)", c.what, top, looks[top])
			}
		}
	}
	// argumentHints' unknown tool, under codedErrors as New orders them
	h := s.codedErrors(s.argumentHints(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "unknown tool \"x\t/srvx/data/c.md\""}
	}))
	clear(looks)
	_, err = h(context.Background(), "tools/call", &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "x\t/srvx/data/c.md"}, Extra: extra})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || !strings.Contains(we.Message, `unknown tool "x\tc.md"`) || looks["/srvx"] != 1 {
		t.Errorf("unknown tool: %v, /srvx looked up %d times: want the path after the tab hidden, looked up once", err, looks["/srvx"])
	}
}

// TestReceiptFailureEscapedOnce: why a call got no receipt (issue's text,
// worded for the client there) ends a tool's text, and a failed call's,
// escaped once and whole, and is not worded again: a control character in
// it is its escape, and a line break in it cannot start a line that reads
// as the call's receipt. Before session 29 neither text escaped it, and a
// failed call's worded it a second time.
func TestReceiptFailureEscapedOnce(t *testing.T) {
	const failure = "lock <store>/refs/a\x1b[2J.lock: held\nreceipt: rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	const said = `lock <store>/refs/a\x1b[2J.lock: held\nreceipt: rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa`
	cleaned := 0
	clean := func(s string) string { cleaned++; return s }
	got := toolError(errors.New("the call failed"), "", failure, clean).Error()
	if want := "the call failed\nno receipt: " + said; got != want {
		t.Errorf("failed call's text\n got %q\nwant %q", got, want)
	}
	if cleaned != 1 {
		t.Errorf("a failed call's text was worded %d times, want once", cleaned)
	}
	if got := receiptLine("Receipt", "", failure); got != "\nNo receipt: "+said {
		t.Errorf("a result's text ends %q", got)
	}
	if got := receiptLine("Receipt", "rcpt_x", ""); got != "\nReceipt: rcpt_x" {
		t.Errorf("a receipted result's text ends %q", got)
	}
}
