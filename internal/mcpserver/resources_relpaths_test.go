package mcpserver_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
)

// TestHTTPResourcesHideClimbingPaths (session 28, re-read): a resource
// declared by a relative path that climbs out of the policy's directory
// (../alice-notes/notes.md, under a [sources] root beside the project)
// says where on the server the document lies as an absolute path would:
// over HTTP it reads as its last name, notes.md, in resources_list,
// resources/list, a resolve's provenance and a manifest's entries; a path
// below the policy's directory (policies/refunds.md) stays, and over stdio
// every one is as readproof.toml declares it; so does the error of a
// declared file that is not there. Before, it was shown whole over HTTP.
func TestHTTPResourcesHideClimbingPaths(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	notes := filepath.Join(filepath.Dir(p.dir), "alice-notes", "notes.md")
	if err := os.MkdirAll(filepath.Dir(notes), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(notes, []byte("Alice's notes.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	cfg = []byte(strings.Replace(string(cfg), "version = 1\n", "version = 1\n\n[sources]\nroots = [\".\", \"../alice-notes\"]\n", 1))
	if err := os.WriteFile(p.config, cfg, 0o644); err != nil {
		t.Fatal(err)
	}
	const rel, notesURI = "../alice-notes/notes.md", "readproof://demo/notes"
	p.declare(t, notesURI, rel)
	const goneRel, goneURI = "../alice-notes/gone.md", "readproof://demo/gone"
	p.declare(t, goneURI, goneRel)
	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeWrite)
	opts := mcpserver.Options{Open: p.opener(), StoreDir: p.store, PolicyFile: p.config}
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	local.ok(t, "readproof_run_start", map[string]any{"run_id": "r"})
	local.ok(t, "readproof_run_mount", map[string]any{"run_id": "r", "uri": notesURI, "position": 0})
	local.ok(t, "readproof_run_commit", map[string]any{"run_id": "r"})
	for _, c := range []struct {
		s      *server
		remote bool
	}{{remote, true}, {local, false}} {
		lr, err := c.s.cs.ListResources(ctxT(t), &mcp.ListResourcesParams{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]string{
			"readproof_resources_list": jsonOf(c.s.ok(t, "readproof_resources_list", map[string]any{})),
			"readproof_resolve":        jsonOf(c.s.ok(t, "readproof_resolve", map[string]any{"uri": notesURI})["provenance"]),
			"readproof_manifest":       jsonOf(c.s.ok(t, "readproof_manifest", map[string]any{"target": "r"})["entries"]),
			"resources/list":           jsonOf(lr.Resources),
		}
		for what, a := range got {
			switch {
			case c.remote && strings.Contains(a, "alice-notes"):
				t.Errorf("%s over HTTP names the directory beside the project:\n%s", what, a)
			case c.remote && !strings.Contains(a, `"notes.md"`):
				t.Errorf("%s over HTTP: want the declared path as \"notes.md\" in\n%s", what, a)
			case !c.remote && !strings.Contains(a, `"`+rel+`"`):
				t.Errorf("%s over stdio: want the declared path %s in\n%s", what, rel, a)
			}
			if strings.HasPrefix(what, "resources") && !strings.Contains(a, `"policies/refunds.md"`) {
				t.Errorf("%s (remote %v): the path below the policy's directory is not kept:\n%s", what, c.remote, a)
			}
		}
		if c.remote {
			mustContain(t, "resources_list's description over HTTP", got["readproof_resources_list"], "— notes.md")
		}
		// the error of a file that is not there names it as the list does
		res := c.s.call(t, "readproof_resolve", map[string]any{"uri": goneURI})
		switch msg := text(res); {
		case !res.IsError:
			t.Errorf("resolve of a missing file: %s", msg)
		case c.remote && (strings.Contains(msg, "alice-notes") || !strings.Contains(msg, "no file at gone.md")):
			t.Errorf("resolve's error over HTTP names the directory beside the project, or not the file:\n%s", msg)
		case !c.remote && !strings.Contains(msg, "no file at "+goneRel):
			t.Errorf("resolve's error over stdio: want %s in\n%s", goneRel, msg)
		}
	}
}
