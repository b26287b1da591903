package mcpserver_test

// An MCP client over HTTP reads none of the server's absolute paths in the
// answers of failing calls; over stdio the same answers name them, as
// before.

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
	"github.com/readproof/readproof/receipts"
)

// pathsProject is a project with receipts on, a probe key file under the
// server's home that is not a key, and a resource whose file is missing.
func pathsProject(t *testing.T) (p *project, opts mcpserver.Options, home string) {
	t.Helper()
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	keyDir, err := os.MkdirTemp(home, "mcppaths-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(keyDir) })
	receiptKey := filepath.Join(keyDir, "receipts.key")
	if err := receipts.CreateKey(receiptKey); err != nil {
		t.Fatal(err)
	}
	probeKey := filepath.Join(keyDir, "probe.key")
	if err := os.WriteFile(probeKey, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p = newProject(t, "version = 1\n\n[receipts]\nkey = \""+receiptKey+"\"\n\n[probe]\nkey = \""+probeKey+"\"\n\n"+
		"[[resource]]\nuri = \""+refundsURI+"\"\nsource = { type = \"filesystem\", path = \"policies/refunds.md\" }\n\n"+
		"[[resource]]\nuri = \"readproof://demo/policies/gone\"\nsource = { type = \"filesystem\", path = \"policies/gone.md\" }\n",
		map[string]string{"policies/refunds.md": "Products can be refunded within 30 days.\n"})
	key, err := receipts.LoadKey(receiptKey)
	if err != nil {
		t.Fatal(err)
	}
	opts = mcpserver.Options{
		// a held lock fails in 50 ms, not in the default's seconds
		Open: func() (*store.Store, error) {
			pol, err := policy.Load(p.config)
			if err != nil {
				return nil, err
			}
			return store.Open(p.store, pol, store.Options{Git: gitstore.Options{LockTimeout: 50 * time.Millisecond}})
		},
		ReceiptKey: key, Session: "paths-1",
		StoreDir: p.store, PolicyFile: p.config,
	}
	return p, opts, home
}

// serveHTTPOpts serves opts over HTTP on 127.0.0.1 in this process.
func (p *project) serveHTTPOpts(t *testing.T, opts mcpserver.Options) *httpServer {
	t.Helper()
	v, err := mcpauth.NewVerifier(p.tokens(), keyloc.Forbidden(p.store, mustPolicy(t, p)), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.Version = buildinfo.Read().Version
	srv, err := mcpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, mcpserver.HTTPOptions{Verify: v.Verify}, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	return &httpServer{url: "http://" + ln.Addr().String() + "/"}
}

// tokenOf adds a token of scope to p's token file, in this process.
func (p *project) tokenOf(t *testing.T, name string, scope mcpauth.Scope) string {
	t.Helper()
	var tok string
	err := mcpauth.Update(p.tokens(), keyloc.Forbidden(p.store, mustPolicy(t, p)), func(f *mcpauth.File) error {
		var err error
		tok, err = f.Add(name, scope, 0, time.Now(), nil)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// answer is everything a client reads of a tool call: its text, its
// structuredContent and _meta, or the protocol error.
func answer(t *testing.T, s *server, name string, args map[string]any) string {
	t.Helper()
	res, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return "protocol error: " + err.Error()
	}
	if !res.IsError {
		t.Errorf("%s %v: want a failure, got %s", name, args, text(res))
	}
	return text(res) + "\n" + jsonOf(res.StructuredContent) + "\n" + jsonOf(res.Meta)
}

// withoutReceipt is an answer without its receipt ids, which differ
// between two servers' calls.
func withoutReceipt(s string) string {
	return receiptID.ReplaceAllString(s, "rcpt_…")
}

var receiptID = regexp.MustCompile(`rcpt_[0-9a-z]{32}`)

// TestHTTPAnswersHideServerPaths: the answers of failing calls over HTTP
// (a locked store, a source file that is missing, a key file that is not
// a key, an object that cannot be read, a missing policy file, a refusal
// of the token's scope) name no absolute path of the server's: not the
// store's, the policy file's, the project's or the home's, in the text,
// the hint, the receipt line, structuredContent, _meta or a JSON-RPC
// error. The same calls over stdio answer what they answered before: the
// same text, with the paths.
func TestHTTPAnswersHideServerPaths(t *testing.T) {
	t.Parallel()
	p, opts, home := pathsProject(t)
	writeTok, readTok := p.tokenOf(t, "remote-agent", mcpauth.ScopeWrite), p.tokenOf(t, "remote-reader", mcpauth.ScopeRead)
	hs := p.serveHTTPOpts(t, opts)
	remote, reader := hs.connect(t, writeTok), hs.connect(t, readTok)
	local := p.serveWith(t, opts)
	root := filepath.Dir(p.dir) // the project's and the store's parent
	if strings.HasPrefix(root, home) || strings.HasPrefix(home, root) {
		t.Fatalf("the project %s and the home %s overlap", root, home)
	}
	key := filepath.Join(home, strings.TrimPrefix(mustPolicy(t, p).ProbeKey, home))
	lockRef := filepath.Join(p.store, filepath.FromSlash(store.OpenPrefix), "held.lock")

	// Committed by the stdio server, replayed by both, after its one
	// object is made unreadable.
	local.ok(t, "readproof_run_start", map[string]any{"run_id": "kept"})
	local.ok(t, "readproof_run_mount", map[string]any{"run_id": "kept", "uri": refundsURI, "position": 0})
	manifest := str(t, local.ok(t, "readproof_run_commit", map[string]any{"run_id": "kept"}), "manifest_id")

	steps := []struct {
		what, tool string
		args       map[string]any
		// path is an absolute path the stdio answer names, and hidden
		// its name over HTTP
		path, hidden string
		before       func()
	}{
		{what: "locked store", tool: "readproof_run_start", args: map[string]any{"run_id": "held"},
			path: p.store, hidden: "<store>/" + store.OpenPrefix + "held.lock",
			before: func() {
				if err := os.MkdirAll(filepath.Dir(lockRef), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(lockRef, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			}},
		{what: "missing source file", tool: "readproof_resolve", args: map[string]any{"uri": "readproof://demo/policies/gone"},
			path: filepath.Join(p.dir, "policies", "gone.md"), hidden: "(gone.md)"},
		{what: "bad key file", tool: "readproof_run_mount", args: map[string]any{"run_id": "probed", "uri": refundsURI, "position": 0, "probe": true},
			path: key, hidden: "~/" + strings.TrimPrefix(key, home+"/"),
			before: func() {
				local.ok(t, "readproof_run_start", map[string]any{"run_id": "probed"})
				// the stdio caller's run is not the token's
				remote.ok(t, "readproof_run_start", map[string]any{"run_id": "probed-r"})
			}},
		{what: "unreadable object", tool: "readproof_replay", args: map[string]any{"target": manifest},
			before: func() {
				// the receipts of the calls so far record the errors as
				// each client read them
				checkReceiptErrors(t, p, opts, root, home)
				breakObjects(t, p.store)
			}},
		{what: "refused scope", tool: "readproof_run_start", args: map[string]any{"run_id": "scoped"}},
		{what: "missing policy file", tool: "readproof_resources_list", args: map[string]any{},
			path: p.config, hidden: "<policy>",
			before: func() {
				if err := os.Rename(p.config, p.config+".away"); err != nil {
					t.Fatal(err)
				}
			}},
	}
	for _, st := range steps {
		if st.before != nil {
			st.before()
		}
		rargs := st.args
		if st.what == "bad key file" {
			rargs = map[string]any{"run_id": "probed-r", "uri": refundsURI, "position": 0, "probe": true}
		}
		var got string
		if st.what == "refused scope" {
			got = answer(t, reader, st.tool, rargs)
		} else {
			got = answer(t, remote, st.tool, rargs)
		}
		for _, secret := range []string{root, home} {
			if strings.Contains(got, secret) {
				t.Errorf("%s over HTTP names %s:\n%s", st.what, secret, got)
			}
		}
		if st.hidden != "" && !strings.Contains(got, st.hidden) {
			t.Errorf("%s over HTTP: want %q in\n%s", st.what, st.hidden, got)
		}
		if st.what == "refused scope" {
			continue
		}
		was := answer(t, local, st.tool, st.args)
		if st.path != "" && !strings.Contains(was, st.path) {
			t.Errorf("%s over stdio: want the path %s in\n%s", st.what, st.path, was)
		}
		if st.what == "bad key file" {
			was = strings.ReplaceAll(was, "run probed ", "run probed-r ")
		}
		if want := withoutReceipt(hideLike(was, p, home)); withoutReceipt(got) != want {
			t.Errorf("%s: over HTTP\n%s\nwant the stdio answer with the paths hidden\n%s", st.what, got, want)
		}
	}

	// resources/read's JSON-RPC error, with the policy file still away
	_, err := remote.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: refundsURI})
	if err == nil || strings.Contains(err.Error(), root) || !strings.Contains(err.Error(), "<policy>") {
		t.Errorf("resources/read over HTTP without a policy file: %v", err)
	}
	_, err = local.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: refundsURI})
	if err == nil || !strings.Contains(err.Error(), p.config) {
		t.Errorf("resources/read over stdio without a policy file: %v, want it to name %s", err, p.config)
	}
}

// checkReceiptErrors: the failed calls' receipts of the token's calls
// record no path of the server's; those of the stdio calls name them.
func checkReceiptErrors(t *testing.T, p *project, opts mcpserver.Options, root, home string) {
	t.Helper()
	st, err := opts.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	entries, err := st.Receipts().Scan(opts.Session)
	if err != nil {
		t.Fatal(err)
	}
	named := 0
	for _, e := range entries {
		r := e.Receipt
		switch {
		case r.Error == "":
		case r.Caller == "remote-agent" && (strings.Contains(r.Error, root) || strings.Contains(r.Error, home)):
			t.Errorf("the receipt of %s over HTTP records a path of the server's: %s", r.Tool, r.Error)
		case r.Caller == "" && (strings.Contains(r.Error, root) || strings.Contains(r.Error, home)):
			named++
		}
	}
	if named != 3 {
		t.Errorf("%d receipts of failed stdio calls name the server's paths, want 3 (locked store, missing file, bad key)", named)
	}
}

// hideLike is what the server's paths become over HTTP, for the paths
// these answers name.
func hideLike(s string, p *project, home string) string {
	s = strings.ReplaceAll(s, p.config, "<policy>")
	s = strings.ReplaceAll(s, p.store, "<store>")
	s = strings.ReplaceAll(s, home, "~")
	return strings.ReplaceAll(s, filepath.Join(p.dir, "policies")+"/", "")
}

func mustPolicy(t *testing.T, p *project) *policy.File {
	t.Helper()
	pol, err := policy.Load(p.config)
	if err != nil {
		t.Fatal(err)
	}
	return pol
}

// breakObjects overwrites every object file of the store (loose objects,
// packs and their indexes) with bytes that are none of them.
func breakObjects(t *testing.T, dir string) {
	t.Helper()
	n := 0
	err := filepath.WalkDir(filepath.Join(dir, "objects"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		n++
		os.Chmod(path, 0o644)
		return os.WriteFile(path, []byte("not an object"), 0o644)
	})
	if err != nil || n == 0 {
		t.Fatalf("breaking the objects: %d broken, %v", n, err)
	}
}

// TestHTTPCommandHidesPathsLogKeeps: `readproof mcp --http --verbose`
// names its store and policy file to the server (a client reads <store>
// and <policy>, and no path of the project), and its log on stderr keeps
// the full text.
func TestHTTPCommandHidesPathsLogKeeps(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	p.declare(t, "readproof://demo/policies/gone", "policies/gone.md")
	tok := p.token(t, "remote-agent")
	hs := p.serveHTTP(t, "--verbose")
	c := hs.connect(t, tok)
	root := filepath.Dir(p.dir)

	gone := answer(t, c, "readproof_resolve", map[string]any{"uri": "readproof://demo/policies/gone"})
	mustContain(t, "a missing file over HTTP", gone, "no file at policies/gone.md (gone.md)")
	if err := os.Rename(p.config, p.config+".away"); err != nil {
		t.Fatal(err)
	}
	noPolicy := answer(t, c, "readproof_resources_list", map[string]any{})
	mustContain(t, "a missing policy file over HTTP", noPolicy, "<policy>")
	for _, a := range []string{gone, noPolicy} {
		if strings.Contains(a, root) {
			t.Errorf("an answer over HTTP names %s:\n%s", root, a)
		}
	}
	hs.stop(t)
	mustContain(t, "the server's log", string(hs.stderr.Bytes()), filepath.Join(p.dir, "policies", "gone.md"), p.config)
}

// homeWarningSource warns as an ssh source warns of the server's
// ~/.ssh/config, naming it by its absolute path.
type homeWarningSource struct {
	warn func(error)
	home string
}

func (w homeWarningSource) Fetch(context.Context, adapters.Request) (adapters.Result, error) {
	w.warn(hint.With(errors.New(filepath.Join(w.home, ".ssh", "config")+" line 2: Match \"exec x\" for host git.example.test: not applied"), "put those lines in a Host block"))
	return adapters.Result{Content: []byte("Products can be refunded within 30 days.\n"), ContentType: "text/markdown"}, nil
}

// TestHTTPWarningsHideServerPaths: a source's warning that names the
// server's ~/.ssh/config reaches a client over HTTP as ~/.ssh/config, in
// warnings, the text and resources/read's _meta; over stdio by its path.
func TestHTTPWarningsHideServerPaths(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	home, err := os.UserHomeDir()
	if err != nil {
		t.Fatal(err)
	}
	opts := mcpserver.Options{Open: func() (*store.Store, error) {
		pol, err := policy.Load(p.config)
		if err != nil {
			return nil, err
		}
		return store.Open(p.store, pol, store.Options{OpenSource: func(_ adapters.Spec, env adapters.Env) (adapters.Source, error) {
			return homeWarningSource{warn: env.Warn, home: home}, nil
		}})
	}, StoreDir: p.store, PolicyFile: p.config}
	tok := p.tokenOf(t, "remote-agent", mcpauth.ScopeWrite)
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	local := p.serveWith(t, opts)
	for _, c := range []struct {
		s    *server
		want string
	}{{remote, "~/.ssh/config line 2"}, {local, filepath.Join(home, ".ssh", "config") + " line 2"}} {
		out := c.s.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
		ws := list(t, out["warnings"])
		if len(ws) != 1 || !strings.HasPrefix(ws[0].(string), c.want) {
			t.Errorf("warnings %v, want one starting %q", ws, c.want)
		}
		rr, err := c.s.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: refundsURI})
		if err != nil {
			t.Fatalf("resources/read: %v", err)
		}
		if ws, _ := rr.Contents[0].Meta["warnings"].([]any); len(ws) != 1 || !strings.HasPrefix(ws[0].(string), c.want) {
			t.Errorf("resources/read: _meta warnings %v, want one starting %q", rr.Contents[0].Meta["warnings"], c.want)
		}
	}
}

// TestHTTPReplayNotesHideServerPaths: a replay over HTTP of a probed run
// whose probe key has become unusable says so in its notes without the
// key file's path (it is under the server's home: ~ there); over stdio
// the note names the path.
func TestHTTPReplayNotesHideServerPaths(t *testing.T) {
	t.Parallel()
	p, opts, home := pathsProject(t)
	key := mustPolicy(t, p).ProbeKey
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	if err := probe.CreateKeyFile(key); err != nil {
		t.Fatal(err)
	}
	local := p.serveWith(t, opts)
	local.ok(t, "readproof_run_start", map[string]any{"run_id": "probed"})
	local.ok(t, "readproof_run_mount", map[string]any{"run_id": "probed", "uri": refundsURI, "position": 0, "probe": true})
	manifest := str(t, local.ok(t, "readproof_run_commit", map[string]any{"run_id": "probed"}), "manifest_id")
	if err := os.WriteFile(key, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tok := p.tokenOf(t, "remote-reader", mcpauth.ScopeRead)
	remote := p.serveHTTPOpts(t, opts).connect(t, tok)
	root := filepath.Dir(p.dir)
	for _, c := range []struct {
		s      *server
		remote bool
	}{{remote, true}, {local, false}} {
		res, err := c.s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: "readproof_replay", Arguments: map[string]any{"target": manifest}})
		if err != nil {
			t.Fatal(err)
		}
		got := text(res) + "\n" + jsonOf(res.StructuredContent)
		if !strings.Contains(got, "no usable probe key at") {
			t.Fatalf("replay with an unusable probe key (remote %v): want a note saying so in\n%s", c.remote, got)
		}
		named := strings.Contains(got, key)
		switch {
		case c.remote && (named || strings.Contains(got, home) || strings.Contains(got, root)):
			t.Errorf("replay over HTTP names a path of the server's:\n%s", got)
		case c.remote && !strings.Contains(got, "~/"+strings.TrimPrefix(key, home+"/")):
			t.Errorf("replay over HTTP: want the key as ~/... in\n%s", got)
		case !c.remote && !named:
			t.Errorf("replay over stdio: want the key's path %s in\n%s", key, got)
		}
	}
}
