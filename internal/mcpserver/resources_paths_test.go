package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// TestHTTPResourcesHideDeclaredPaths (session 28): a resource declared by
// an absolute path of the server's machine is listed over HTTP with that
// path hidden as an error hides it (the base name, or under ~, <store>):
// in readproof_resources_list's description, source and current
// provenance, in resources/list's description and _meta source, and in the
// provenance of a resolve; a relative path (the policy's own name) stays.
// Over stdio every one names the path as readproof.toml declares it.
// Before, resources_list and resources/list showed a read token the
// declared path whole, which the errors of the same server hide.
func TestHTTPResourcesHideDeclaredPaths(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	abs := filepath.Join(p.dir, "policies", "refunds.md")
	const absURI = "readproof://demo/policies/refunds-abs"
	p.declare(t, absURI, abs)
	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeWrite)
	opts := mcpserver.Options{Open: p.opener(), StoreDir: p.store, PolicyFile: p.config}
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	local.ok(t, "readproof_resolve", map[string]any{"uri": absURI}) // a current snapshot, with provenance
	root := filepath.Dir(p.dir)
	for _, c := range []struct {
		s      *server
		remote bool
	}{{remote, true}, {local, false}} {
		list := c.s.ok(t, "readproof_resources_list", map[string]any{})
		resolved := c.s.ok(t, "readproof_resolve", map[string]any{"uri": absURI})
		lr, err := c.s.cs.ListResources(ctxT(t), &mcp.ListResourcesParams{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{"readproof_resources_list": jsonOf(list), "readproof_resolve": jsonOf(resolved["provenance"]), "resources/list": jsonOf(lr.Resources)}
		for what, a := range got {
			switch {
			case c.remote && strings.Contains(a, root):
				t.Errorf("%s over HTTP names %s:\n%s", what, root, a)
			case c.remote && !strings.Contains(a, `"refunds.md"`):
				t.Errorf("%s over HTTP: want the declared path as \"refunds.md\" in\n%s", what, a)
			case !c.remote && !strings.Contains(a, abs):
				t.Errorf("%s over stdio: want the declared path %s in\n%s", what, abs, a)
			}
			if what != "readproof_resolve" && !strings.Contains(a, `"policies/refunds.md"`) {
				t.Errorf("%s (remote %v): the relative path policies/refunds.md is not kept:\n%s", what, c.remote, a)
			}
		}
		if c.remote {
			mustContain(t, "resources_list's description over HTTP", jsonOf(list), "filesystem · require_fresh — refunds.md")
		}
	}
}
