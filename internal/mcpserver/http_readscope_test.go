package mcpserver_test

// What a token of scope read can make the server write (session 28's
// re-read of the read scope): nothing but its receipts.

import (
	"encoding/json"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// storeFiles is every regular file of the store with its size and
// modification time: what a write would change.
func storeFiles(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		out[path] = fi.ModTime().String() + " " + jsonOf(fi.Size())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func diffFiles(before, after map[string]string) []string {
	var d []string
	for p, v := range after {
		if before[p] != v {
			d = append(d, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			d = append(d, p+" (removed)")
		}
	}
	sort.Strings(d)
	return d
}

// TestHTTPReadTokenWritesNothing: with receipts off, nothing a token of
// scope read sends changes a file of the store: every tool (those that
// write refused), resources/list and resources/read of a require_fresh
// document that changed, of an allow_stale one never read, of a resource
// pinned to a snapshot that was never recorded, of a tag that does not
// exist, and a completion request.
func TestHTTPReadTokenWritesNothing(t *testing.T) {
	t.Parallel()
	const (
		staleURI  = "readproof://demo/policies/shipping"
		pinnedURI = "readproof://demo/policies/pinned"
	)
	p := newProject(t, "version = 1\n\n[[resource]]\nuri = \""+refundsURI+"\"\nsource = { type = \"filesystem\", path = \"policies/refunds.md\" }\n\n"+
		"[[resource]]\nuri = \""+staleURI+"\"\nsource = { type = \"filesystem\", path = \"policies/shipping.md\" }\npolicy = \"allow_stale\"\nmax_age = \"1h\"\n\n"+
		"[[resource]]\nuri = \""+pinnedURI+"\"\nsource = { type = \"filesystem\", path = \"policies/pinned.md\" }\npolicy = \"pinned\"\nsnapshot = \"deadbeefdeadbeefdeadbeefdeadbeefdeadbeef\"\n",
		map[string]string{"policies/refunds.md": "Refunds within 30 days.\n", "policies/shipping.md": "Ships in 2 days.\n", "policies/pinned.md": "Pinned.\n"})
	w := p.tokenOf(t, "writer", mcpauth.ScopeWrite)
	r := p.tokenOf(t, "reader", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener()})
	ws, rs := srv.connect(t, w), srv.connect(t, r)
	ws.ok(t, mcpserver.ToolRunStart, map[string]any{"run_id": "r1"})
	ws.ok(t, mcpserver.ToolRunMount, map[string]any{"run_id": "r1", "uri": refundsURI})
	ws.ok(t, mcpserver.ToolTagSet, map[string]any{"uri": refundsURI, "tag": "prod"})
	manifest := str(t, ws.ok(t, mcpserver.ToolRunCommit, map[string]any{"run_id": "r1"}), "manifest_id")
	p.write(t, "policies/refunds.md", "Refunds within 14 days.\n")

	before := storeFiles(t, p.store)
	calls := []struct {
		tool  string
		args  map[string]any
		fails bool
	}{
		{mcpserver.ToolResourcesList, nil, false},
		{mcpserver.ToolResolve, map[string]any{"uri": refundsURI}, true},
		{mcpserver.ToolResolve, map[string]any{"uri": refundsURI + "@prod"}, false},
		{mcpserver.ToolResolve, map[string]any{"uri": refundsURI + "@nosuch"}, true},
		{mcpserver.ToolResolve, map[string]any{"uri": staleURI}, true},
		{mcpserver.ToolResolve, map[string]any{"uri": pinnedURI}, true},
		{mcpserver.ToolHistory, map[string]any{"uri": refundsURI}, false},
		{mcpserver.ToolHistory, map[string]any{"uri": staleURI}, false},
		{mcpserver.ToolManifest, map[string]any{"target": "r1"}, false},
		{mcpserver.ToolDiff, map[string]any{"a": "r1", "b": manifest}, false},
		{mcpserver.ToolReplay, map[string]any{"target": "r1", "include_content": true}, false},
		{mcpserver.ToolTagList, map[string]any{"uri": refundsURI}, false},
		{mcpserver.ToolEvidenceExport, map[string]any{"target": manifest, "with_content": true}, false},
		{mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": "[]"}, true},
		{mcpserver.ToolRunStart, map[string]any{"run_id": "r2"}, true},
		{mcpserver.ToolRunMount, map[string]any{"run_id": "r1", "uri": refundsURI, "probe": true}, true},
		{mcpserver.ToolRunCommit, map[string]any{"run_id": "r1"}, true},
		{mcpserver.ToolTagSet, map[string]any{"uri": refundsURI, "tag": "dev"}, true},
		{mcpserver.ToolTagDelete, map[string]any{"uri": refundsURI, "tag": "prod"}, true},
		{mcpserver.ToolProbeCheck, map[string]any{"target": "r1", "answer": "x"}, true},
	}
	for _, c := range calls {
		res, err := rs.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatalf("%s: %v", c.tool, err)
		}
		if res.IsError != c.fails {
			t.Errorf("%s %v: failed %v, want %v: %.300s", c.tool, c.args, res.IsError, c.fails, text(res))
		}
	}
	for _, uri := range []string{refundsURI, refundsURI + "@prod", refundsURI + "@nosuch", staleURI, pinnedURI, "readproof://demo/undeclared"} {
		_, _ = rs.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: uri})
	}
	_, _ = srv.postRaw(t, r, `{"jsonrpc":"2.0","id":8,"method":"resources/list"}`)
	_, _ = srv.postRaw(t, r, `{"jsonrpc":"2.0","id":9,"method":"completion/complete","params":{"ref":{"type":"ref/resource","uri":"readproof://{namespace}/{+path}"},"argument":{"name":"namespace","value":"d"}}}`)
	if d := diffFiles(before, storeFiles(t, p.store)); len(d) > 0 {
		t.Errorf("a read token's calls changed the store: %s", strings.Join(d, ", "))
	}
}

// TestHTTPReadTokenResourceRefusal: resources/read of a document a read
// token may not read now (it would record a snapshot) is refused with
// invalid params (-32602), not an internal error (-32603) a client retries:
// the message says it is refused and why, and ends in the hint; the data
// names the URI and the reason. Before the re-read of session 28 it was
// -32603, as a source that fails is.
func TestHTTPReadTokenResourceRefusal(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	r := p.tokenOf(t, "reader", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener()})
	we := srv.connect(t, r).readErr(t, refundsURI)
	if we.Code != jsonrpc.CodeInvalidParams {
		t.Errorf("code %d, want %d (invalid params: refused, not to be retried): %s", we.Code, jsonrpc.CodeInvalidParams, we.Message)
	}
	mustContain(t, "refusal", we.Message, "Resource refused: ", `the token "reader" has scope read: refused`, "(hint: read a tagged snapshot instead")
	var data struct{ URI, Reason string }
	if err := json.Unmarshal(we.Data, &data); err != nil || data.URI != refundsURI || data.Reason != "refused for a read token" {
		t.Errorf("data %s (%v): want the URI and the reason", we.Data, err)
	}
}

// TestReadScopeDescribed: the description of readproof_resolve and of the
// resource template say what a token of scope read gets (what the store
// holds; a refusal where the policy would read the source): before the
// re-read of session 28 they said only that a read may record a snapshot,
// and a model holding a read token read a require_fresh document, was
// refused, and was not told of URI@TAG before.
func TestReadScopeDescribed(t *testing.T) {
	t.Parallel()
	s := demoProject(t).serve(t)
	tools, err := s.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, tool := range tools.Tools {
		if tool.Name == mcpserver.ToolResolve {
			found = true
			mustContain(t, "readproof_resolve description", tool.Description, "A token of scope read records nothing", "refused where the policy would read the source", "URI@TAG")
		}
	}
	if !found {
		t.Fatalf("no %s in tools/list", mcpserver.ToolResolve)
	}
	tpls, err := s.cs.ListResourceTemplates(ctxT(t), nil)
	if err != nil || len(tpls.ResourceTemplates) != 1 {
		t.Fatalf("resources/templates/list: %v %v", tpls, err)
	}
	mustContain(t, "template description", tpls.ResourceTemplates[0].Description, "a token of scope read is refused where it would")
}
