package mcpserver_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
)

// warningSource reads its bytes and warns, as an ssh source warns of a
// ~/.ssh/config line readproof does not apply.
type warningSource struct{ warn func(error) }

func (w warningSource) Fetch(context.Context, adapters.Request) (adapters.Result, error) {
	if w.warn != nil {
		w.warn(hint.With(errors.New("/home/op/.ssh/config line 2: Match \"exec x\" for host git.example.test: not applied"), "put those lines in a Host block"))
	}
	return adapters.Result{Content: []byte("Products can be refunded within 30 days.\n"), ContentType: "text/markdown"}, nil
}

// A source's warning reaches the answer of the tool that read the source
// (readproof_resolve, readproof_run_mount): in warnings, with its hint,
// and in the text, once per answer, as the command says it once; and
// resources/read's _meta.
func TestSourceWarningsInToolAnswer(t *testing.T) {
	p := demoProject(t)
	s := p.serveWith(t, mcpserver.Options{Open: func() (*store.Store, error) {
		pol, err := policy.Load(p.config)
		if err != nil {
			return nil, err
		}
		return store.Open(p.store, pol, store.Options{OpenSource: func(_ adapters.Spec, env adapters.Env) (adapters.Source, error) {
			return warningSource{warn: env.Warn}, nil
		}})
	}})
	want := `/home/op/.ssh/config line 2: Match "exec x" for host git.example.test: not applied; put those lines in a Host block`
	check := func(name string, args map[string]any) {
		t.Helper()
		res := s.call(t, name, args)
		if res.IsError {
			t.Fatalf("%s: %s", name, text(res))
		}
		out, _ := res.StructuredContent.(map[string]any)
		ws, _ := out["warnings"].([]any)
		if len(ws) != 1 || ws[0] != want {
			t.Errorf("%s: warnings %v, want [%s]", name, out["warnings"], want)
		}
		if txt := text(res); strings.Count(txt, "Warning: "+want+".") != 1 {
			t.Errorf("%s: text %q does not say the warning once", name, txt)
		}
	}
	check("readproof_resolve", map[string]any{"uri": refundsURI})
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "warned"})
	check("readproof_run_mount", map[string]any{"run_id": "warned", "uri": refundsURI})
	rr, err := s.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: refundsURI})
	if err != nil {
		t.Fatalf("resources/read: %v", err)
	}
	if ws, _ := rr.Contents[0].Meta["warnings"].([]any); len(ws) != 1 || ws[0] != want {
		t.Errorf("resources/read: _meta warnings %v, want [%s]", rr.Contents[0].Meta["warnings"], want)
	}
}

// The real path: `readproof mcp` reading a git source over ssh whose
// ~/.ssh/config has a Match block for the host says it in the tool's
// answer (here an error: nothing listens on the port), not on the
// server's stderr, which stays empty without --verbose (start checks).
func TestSSHConfigWarningInToolError(t *testing.T) {
	p := newProject(t, "version = 1\n\n[network]\nallow_cidrs = [\"127.0.0.0/8\"]\n\n[[resource]]\nuri = \"readproof://git/doc\"\n"+
		"source = { type = \"git\", url = \"ssh://git@127.0.0.1:1/docs.git\", path = \"doc.md\" }\n", nil)
	if err := os.MkdirAll(filepath.Join(p.home, ".ssh"), 0o700); err != nil {
		t.Fatal(err)
	}
	conf := "Match exec \"true\"\n  User nobody\nHost 127.0.0.1\n  User git\n"
	if err := os.WriteFile(filepath.Join(p.home, ".ssh", "config"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	s := p.start(t)
	res := s.call(t, "readproof_resolve", map[string]any{"uri": "readproof://git/doc"})
	if !res.IsError {
		t.Fatalf("resolve of a port nothing listens on: %s", text(res))
	}
	for _, want := range []string{"(warning: ", ".ssh/config line 1: Match", "readproof does not apply Match blocks, so this one's User is not used", "put those lines in a Host block for the host (Host 127.0.0.1)"} {
		if !strings.Contains(text(res), want) {
			t.Errorf("%s\ndoes not say %q", text(res), want)
		}
	}
}
