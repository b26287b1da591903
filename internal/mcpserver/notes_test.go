package mcpserver_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// TestOperatorNotesFiltered: the description an operator writes for a
// resource in readproof.toml (readproof_resources_list's note,
// resources/list's _meta.description) is worded for the client as every
// other text is: over HTTP without the server's paths, and with an MCP
// bearer token in it masked, over stdio too. Before session 29 it reached
// every client as written: a note naming where the file lies, or the
// token an agent should use, gave both to every token holder.
func TestOperatorNotesFiltered(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	abs := filepath.Join(p.dir, "policies", "refunds.md")
	secret := "rpmcp_" + strings.Repeat("ab", 32)
	p.declare(t, "readproof://demo/policies/noted", "policies/refunds.md")
	note := "kept at " + abs + "; ask with " + secret
	toml, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	p.write(t, "readproof.toml", strings.Replace(string(toml), "uri = \"readproof://demo/policies/noted\"\n",
		fmt.Sprintf("uri = \"readproof://demo/policies/noted\"\ndescription = %q\n", note), 1))
	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeRead)
	opts := mcpserver.Options{Open: p.opener(), StoreDir: p.store, PolicyFile: p.config}
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	root := filepath.Dir(p.dir)
	for _, c := range []struct {
		s      *server
		remote bool
	}{{remote, true}, {local, false}} {
		list := c.s.ok(t, mcpserver.ToolResourcesList, map[string]any{})
		lr, err := c.s.cs.ListResources(ctxT(t), &mcp.ListResourcesParams{})
		if err != nil {
			t.Fatal(err)
		}
		for what, a := range map[string]string{"readproof_resources_list": jsonOf(list), "resources/list": jsonOf(lr.Resources)} {
			if strings.Contains(a, secret[len("rpmcp_"):len("rpmcp_")+8]) || !strings.Contains(a, "ask with rpmcp_[REDACTED]") {
				t.Errorf("%s (remote %v): want the token in the note masked:\n%s", what, c.remote, a)
			}
			switch {
			case c.remote && strings.Contains(a, root):
				t.Errorf("%s over HTTP names %s:\n%s", what, root, a)
			case c.remote && !strings.Contains(a, "kept at refunds.md;"):
				t.Errorf("%s over HTTP: want the note's path as its base name:\n%s", what, a)
			case !c.remote && !strings.Contains(a, "kept at "+abs+";"):
				t.Errorf("%s over stdio: want the note's path whole:\n%s", what, a)
			}
			// the other note stays as written
			mustContain(t, what, a, "Refund policy")
		}
	}
}
