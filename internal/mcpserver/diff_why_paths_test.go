package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// TestHTTPDiffWhyHidesMovedPath (session 30, revreviewer): readproof_diff's
// why line names a source path that moved between the runs (session 29).
// Over HTTP the entries' provenance hides a path of the server's machine,
// as an error hides it; the why line named both paths whole, since it was
// made from the entries before they were worded for the client. It is now
// made from the entries as the client reads them: over HTTP the base names,
// over stdio the paths as declared.
func TestHTTPDiffWhyHidesMovedPath(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	const absURI = "readproof://demo/policies/refunds-abs"
	oldPath := filepath.Join(p.dir, "policies", "refunds.md")
	newPath := filepath.Join(p.dir, "policies", "refunds-2027.md")
	p.declare(t, absURI, oldPath)
	p.cli(t, "run", "--id", "run-a", absURI)
	p.write(t, "policies/refunds-2027.md", "Products can be refunded within 14 days.\n")
	cfg, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.config, []byte(strings.Replace(string(cfg), oldPath, newPath, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	p.cli(t, "run", "--id", "run-b", absURI)

	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeRead)
	opts := mcpserver.Options{Open: p.opener(), StoreDir: p.store, PolicyFile: p.config}
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	args := map[string]any{"a": "run-a", "b": "run-b"}
	root := filepath.Dir(p.dir)

	res := remote.call(t, "readproof_diff", args)
	got := text(res) + jsonOf(res.StructuredContent)
	if strings.Contains(got, root) {
		t.Errorf("readproof_diff over HTTP names %s:\n%s", root, got)
	}
	mustContain(t, "readproof_diff over HTTP", got, "source path refunds.md → refunds-2027.md")

	res = local.call(t, "readproof_diff", args)
	mustContain(t, "readproof_diff over stdio", text(res)+jsonOf(res.StructuredContent), "source path "+oldPath+" → "+newPath)
}
