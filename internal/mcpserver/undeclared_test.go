package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
)

// undeclaredCalls are requests for what the initialize result does not
// declare (no prompts, no logging, no completions, no subscriptions): docs/README-mcp.md
// says they are not provided, so each is a method-not-found error
// (-32601), as MCP asks of a server without the capability.
var undeclaredCalls = []string{
	`{"jsonrpc":"2.0","id":71,"method":"prompts/list","params":{}}`,
	`{"jsonrpc":"2.0","id":72,"method":"prompts/get","params":{"name":"x"}}`,
	`{"jsonrpc":"2.0","id":73,"method":"logging/setLevel","params":{"level":"debug"}}`,
	`{"jsonrpc":"2.0","id":74,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"readproof://{namespace}/{+path}"},"argument":{"name":"namespace","value":"d"}}}`,
	`{"jsonrpc":"2.0","id":75,"method":"resources/subscribe","params":{"uri":"readproof://demo/policies/refunds"}}`,
}

// TestUndeclaredMethodsNotFound: over HTTP and stdio, every method of a
// capability the server does not declare is answered "method not found".
// prompts/list used to answer an empty list, prompts/get "unknown prompt"
// (-32602) and logging/setLevel success, so a host believed the server
// had prompts and would log to it.
func TestUndeclaredMethodsNotFound(t *testing.T) {
	t.Parallel()
	check := func(how string, id json.RawMessage, result json.RawMessage, code int64, msg string) {
		t.Helper()
		if result != nil || code != -32601 || !strings.Contains(msg, "method not found") {
			t.Errorf("%s: id %s answered result %s, error %d %q; want method not found (-32601)", how, id, result, code, msg)
		}
	}
	s := &httpServer{url: demoHTTP(t, mcpserver.HTTPOptions{}).URL + "/"}
	for _, body := range undeclaredCalls {
		resp, got := s.postRaw(t, anyToken, body)
		var r struct {
			ID     json.RawMessage
			Result json.RawMessage
			Error  *struct {
				Code    int64
				Message string
			}
		}
		if err := json.Unmarshal([]byte(got), &r); err != nil || resp.StatusCode != http.StatusOK {
			t.Errorf("HTTP %s: %d %q", body, resp.StatusCode, got)
			continue
		}
		if r.Error == nil {
			check("HTTP", r.ID, r.Result, 0, "")
			continue
		}
		check("HTTP", r.ID, r.Result, r.Error.Code, r.Error.Message)
	}
	w := demoProject(t).wire(t)
	w.initialize()
	for _, body := range undeclaredCalls {
		w.send(body)
		r := w.next()
		if r.Error == nil {
			check("stdio", r.ID, r.Result, 0, "")
			continue
		}
		check("stdio", r.ID, r.Result, int64(r.Error.Code), r.Error.Message)
	}
}
