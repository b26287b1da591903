package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
)

// TestHTTPExportWarningsHideServerPaths (session 28): the warnings of an
// evidence export over HTTP (here the store check store_replace's, which
// names the store's info/grafts file) name the store <store>, in warnings
// and in the text, as an error does; over stdio they name its path.
// Before, an export's warnings were not worded for the client: they named
// the store's absolute path over HTTP too.
func TestHTTPExportWarningsHideServerPaths(t *testing.T) {
	t.Parallel()
	p, opts, _ := pathsProject(t)
	local := p.serveWith(t, opts)
	local.ok(t, "readproof_run_start", map[string]any{"run_id": "kept"})
	local.ok(t, "readproof_run_mount", map[string]any{"run_id": "kept", "uri": refundsURI, "position": 0})
	local.ok(t, "readproof_run_commit", map[string]any{"run_id": "kept"})
	grafts := filepath.Join(p.store, "info", "grafts")
	if err := os.MkdirAll(filepath.Dir(grafts), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(grafts, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tok := p.tokenOf(t, "remote-reader", mcpauth.ScopeRead)
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	root := filepath.Dir(p.dir)
	for _, c := range []struct {
		s    *server
		want string
	}{{remote, "<store>/info/grafts"}, {local, grafts}} {
		res := c.s.call(t, "readproof_evidence_export", map[string]any{"target": "kept"})
		out, _ := res.StructuredContent.(map[string]any)
		if res.IsError || out == nil {
			t.Fatalf("export with an info/grafts file: %s", text(res))
		}
		delete(out, "bundle") // the evidence, as the store records it
		ws := fmt.Sprint(out["warnings"])
		if !strings.Contains(ws, c.want) || !strings.Contains(text(res), "Warning: run kept: store check store_replace failed: "+c.want) {
			t.Errorf("warnings %s, text\n%s\nwant %s in both", ws, text(res), c.want)
		}
		if got := text(res) + "\n" + jsonOf(out); c.s == remote && strings.Contains(got, root) {
			t.Errorf("an export over HTTP names %s beside its bundle:\n%s", root, got)
		}
	}
}
