package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpserver"
)

// TestHTTPBatchRefused: a JSON-RPC batch is refused over HTTP whatever
// protocol version the request names, as over stdio (docs/README-mcp.md):
// 400 with an invalid-request error (-32600). A POST without
// Mcp-Protocol-Version (taken as 2025-03-26) or naming 2025-03-26 used to
// be served whole: one POST of 20 tool calls passed a token's --rate 1
// --burst 1 as one request, and ids inside a batch escaped the id check.
func TestHTTPBatchRefused(t *testing.T) {
	t.Parallel()
	calls := make([]string, 20)
	for i := range calls {
		calls[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"readproof_resources_list","arguments":{}}}`, i+1)
	}
	batch := "[" + strings.Join(calls, ",") + "]"
	for _, version := range []string{"", "2025-03-26", "2025-06-18"} {
		// a server each: the one POST is all the token's budget
		ts := demoHTTP(t, mcpserver.HTTPOptions{Rate: 1, Burst: 1})
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/", strings.NewReader(batch))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer "+anyToken)
		if version != "" {
			req.Header.Set("Mcp-Protocol-Version", version)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		var r struct {
			Error *struct {
				Code    int
				Message string
			}
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &r) != nil || r.Error == nil || r.Error.Code != -32600 ||
			!strings.Contains(r.Error.Message, "batches are not supported") {
			t.Errorf("a batch of 20 calls, protocol version %q: %d %.200s; want 400 with an invalid-request error (-32600) saying batches are not supported",
				version, resp.StatusCode, body)
		}
	}
}
