package mcpserver_test

// Issue 17, acceptance 1: `readproof mcp --http` as a real subprocess (or,
// where the subject is what callers get rather than the command, its
// ServeHTTP in this process: serveHTTPIn), the go-sdk client over
// streamable HTTP with bearer tokens.

import (
	"bufio"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/internal/testsize"
)

// httpServer is a running `readproof mcp --http 127.0.0.1:0` subprocess.
type httpServer struct {
	url    string
	cmd    *exec.Cmd
	stderr *testproc.SyncBuffer
	done   chan error
}

func (p *project) tokens() string { return filepath.Join(p.home, "tokens", "mcp-tokens.json") }

// token adds a token with `readproof mcp token add` and returns it. A
// token with the defaults (write scope, no expiry) is added in this
// process, to the same file, through the update `mcp token add` makes
// (mcpauth.Update and File.Add, with the paths the store and the policy
// forbid): a child process less for each of the 13 such tokens. The
// command itself runs for the tokens given flags here, and in
// testdata/script/mcp_http_cli.txtar.
func (p *project) token(t testing.TB, name string, args ...string) string {
	t.Helper()
	if len(args) == 0 {
		pol, err := policy.Load(p.config)
		if err != nil {
			t.Fatal(err)
		}
		var tok string
		err = mcpauth.Update(p.tokens(), keyloc.Forbidden(p.store, pol), func(f *mcpauth.File) error {
			var err error
			tok, err = f.Add(name, mcpauth.ScopeWrite, 0, time.Now(), nil)
			return err
		})
		if err != nil {
			t.Fatalf("add token %s: %v", name, err)
		}
		return tok
	}
	out := p.cli(t, append([]string{"mcp", "token", "add", name, "--tokens", p.tokens()}, args...)...)
	tok := strings.TrimSpace(out)
	if !strings.HasPrefix(tok, "rpmcp_") || strings.Contains(tok, "\n") {
		t.Fatalf("token add printed %q", out)
	}
	return tok
}

// ageExpiry checks that token name expires about ttl from now (to the
// second, as `mcp token add --expires` sets it), and moves that expiry back
// by age: time passing, without waiting for it.
func (p *project) ageExpiry(t testing.TB, name string, ttl, age time.Duration) {
	t.Helper()
	pol, err := policy.Load(p.config)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	err = mcpauth.Update(p.tokens(), keyloc.Forbidden(p.store, pol), func(f *mcpauth.File) error {
		for i, e := range f.Tokens {
			if e.Name != name {
				continue
			}
			if e.ExpiresAt == nil || e.ExpiresAt.Before(now.Add(ttl-time.Minute)) || e.ExpiresAt.After(now.Add(ttl)) {
				return fmt.Errorf("token %s expires at %v, want about %s after %v", name, e.ExpiresAt, ttl, now)
			}
			old := e.ExpiresAt.Add(-age)
			f.Tokens[i].ExpiresAt = &old
			return nil
		}
		return fmt.Errorf("no token %s", name)
	})
	if err != nil {
		t.Fatal(err)
	}
}

var listening = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`on (https?://127\.0\.0\.1:[0-9]+/)`) })

// serveHTTP starts the server and waits until it listens. At cleanup it
// sends SIGTERM and expects exit 0.
func (p *project) serveHTTP(t testing.TB, args ...string) *httpServer {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--store", p.store, "--config", p.config, "mcp", "--http", "127.0.0.1:0", "--tokens", p.tokens()}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	s := &httpServer{cmd: cmd, stderr: &testproc.SyncBuffer{}, done: make(chan error, 1)}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	found := make(chan string, 1)
	eof := make(chan struct{})
	go func() {
		defer close(eof)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			s.stderr.Write([]byte(line + "\n"))
			if m := listening().FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
	}()
	go func() {
		err := cmd.Wait()
		// done says the server exited and what it wrote is all in stderr:
		// Wait does not wait for the reader of the pipe
		select {
		case <-eof:
		case <-time.After(5 * time.Second): // a child still holds the pipe
		}
		s.done <- err
	}()
	select {
	case s.url = <-found:
	case err := <-s.done:
		t.Fatalf("readproof mcp --http exited: %v\n%s", err, s.stderr.Bytes())
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("readproof mcp --http did not say where it listens\n%s", s.stderr.Bytes())
	}
	t.Cleanup(func() { s.stop(t) })
	return s
}

// serveHTTPIn is serveHTTP without the process, for the tests whose subject
// is what HTTP callers get (scopes, token states, callers, live policy):
// Server.ServeHTTP, the loop `readproof mcp --http 127.0.0.1:0` runs, in
// this process on a loopback listener, with the verifier of p's token file
// and the default limits the command's flags give. At cleanup its context
// ends, as SIGTERM ends the command's, and it must return nil. Flags, the
// address on stderr, TLS, the rate and body limits and the signal keep
// their subprocess tests.
func (p *project) serveHTTPIn(t testing.TB) *httpServer {
	t.Helper()
	pol, err := policy.Load(p.config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := mcpauth.NewVerifier(p.tokens(), keyloc.Forbidden(p.store, pol), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener(), Version: buildinfo.Read().Version})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpServer{url: "http://" + ln.Addr().String() + "/", stderr: &testproc.SyncBuffer{}, done: make(chan error, 1)}
	go func() { s.done <- srv.ServeHTTP(ctx, mcpserver.HTTPOptions{Verify: v.Verify}, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("ServeHTTP returned %v after its context ended", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("ServeHTTP did not return within 30 s of its context's end")
		}
	})
	return s
}

// stop sends SIGTERM and waits for exit 0.
func (s *httpServer) stop(t testing.TB) {
	t.Helper()
	if s.cmd.ProcessState != nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.done:
		if err != nil {
			t.Errorf("readproof mcp --http exited with %v after SIGTERM\n%s", err, s.stderr.Bytes())
		}
		s.done <- err
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("readproof mcp --http did not stop within 30 s of SIGTERM")
	}
}

// bearer adds the Authorization header to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// connect opens a go-sdk client session over HTTP with token.
func (s *httpServer) connect(t testing.TB, token string) *server {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "readproof-http-test", Version: "1"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: s.url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}, DisableStandaloneSSE: true}
	cs, err := client.Connect(ctxT(t), tr, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v\n%s", err, s.stderr.Bytes())
	}
	t.Cleanup(func() { _ = cs.Close() })
	return &server{cs: cs, closed: true}
}

// post sends one raw JSON-RPC request and returns the HTTP status.
func (s *httpServer) post(t testing.TB, token, body string) int {
	t.Helper()
	resp, _ := s.postRaw(t, token, body)
	return resp.StatusCode
}

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

func twoDocProject(t testing.TB) *project {
	p := demoProject(t)
	p.write(t, "policies/shipping.md", "Orders ship within 2 days.\n")
	p.declare(t, "readproof://demo/policies/shipping", "policies/shipping.md")
	return p
}

// TestHTTPManyClientsOneStore: 16 clients × 50 runs (4 × 5 unless
// READPROOF_LONG_TESTS=1), each run started, given two mounts and
// committed over HTTP, each client with its own token: every run is
// committed, none lost, each manifest names its caller, and verify is
// clean.
func TestHTTPManyClientsOneStore(t *testing.T) {
	t.Parallel()
	clients, runs := testsize.Pick(t, 4, 16), testsize.Pick(t, 5, 50)
	p := twoDocProject(t)
	toks := make([]string, clients)
	for i := range toks {
		toks[i] = p.token(t, fmt.Sprintf("agent-%d", i))
	}
	srv := p.serveHTTPIn(t)
	start := time.Now()
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	var committed atomic.Int64
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func(c int) {
			defer wg.Done()
			s := srv.connect(t, toks[c])
			call := func(tool string, args map[string]any) (*mcp.CallToolResult, error) {
				res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
				if err == nil && res.IsError {
					err = fmt.Errorf("%s: %s", tool, text(res))
				}
				return res, err
			}
			for r := 0; r < runs; r++ {
				id := fmt.Sprintf("c%02d-r%03d", c, r)
				for _, step := range []struct {
					tool string
					args map[string]any
				}{
					{"readproof_run_start", map[string]any{"run_id": id}},
					{"readproof_run_mount", map[string]any{"run_id": id, "uri": refundsURI}},
					{"readproof_run_mount", map[string]any{"run_id": id, "uri": "readproof://demo/policies/shipping"}},
					{"readproof_run_commit", map[string]any{"run_id": id}},
				} {
					if _, err := call(step.tool, step.args); err != nil {
						errs <- fmt.Errorf("client %d run %s: %w", c, id, err)
						return
					}
				}
				committed.Add(1)
			}
		}(c)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	elapsed := time.Since(start)
	t.Logf("%d clients × %d runs over HTTP: %d committed in %s (%.0f tool calls/s)", clients, runs, committed.Load(), elapsed.Round(time.Millisecond),
		float64(4*committed.Load())/elapsed.Seconds())
	want := clients * runs
	var list []struct {
		RunID string `json:"run_id"`
		Open  bool   `json:"open"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "run", "list")), &list); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, r := range list {
		if !r.Open {
			n++
		}
	}
	if n != want {
		t.Fatalf("%d committed runs in the store, want %d (lost %d)", n, want, want-n)
	}
	var m struct {
		Caller  string `json:"caller"`
		Entries []any  `json:"entries"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "manifest", "c01-r002")), &m); err != nil {
		t.Fatal(err)
	}
	if m.Caller != "agent-1" || len(m.Entries) != 2 {
		t.Errorf("manifest c01-r002: caller %q, %d entries", m.Caller, len(m.Entries))
	}
	p.cli(t, "verify")
}

// TestHTTPReadTokenRefusedOnWritingTools: a read-only token is refused on
// every tool that writes, with a tool error naming the scope, and served
// on the others.
func TestHTTPReadTokenRefusedOnWritingTools(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.token(t, "writer")
	r := p.token(t, "reader", "--scope", "read")
	srv := p.serveHTTPIn(t)
	ws := srv.connect(t, w)
	ws.ok(t, "readproof_run_start", map[string]any{"run_id": "open1"})
	ws.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI})
	ws.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod"})

	rs := srv.connect(t, r)
	tools, err := rs.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	args := map[string]map[string]any{
		"readproof_run_start":   {"run_id": "ro1"},
		"readproof_run_mount":   {"run_id": "open1", "uri": refundsURI},
		"readproof_run_commit":  {"run_id": "open1"},
		"readproof_tag_set":     {"uri": refundsURI, "tag": "x"},
		"readproof_tag_delete":  {"uri": refundsURI, "tag": "prod"},
		"readproof_probe_check": {"target": "open1", "answer": "x"},
	}
	refused := 0
	for _, tool := range tools.Tools {
		if !mcpserver.WritesStore(tool.Name) {
			if tool.Annotations == nil || (!tool.Annotations.ReadOnlyHint && tool.Name != "readproof_resolve") {
				t.Errorf("%s changes the store but is open to read tokens", tool.Name)
			}
			continue
		}
		a, ok := args[tool.Name]
		if !ok {
			t.Errorf("no arguments in this test for writing tool %s", tool.Name)
			continue
		}
		msg := rs.fail(t, tool.Name, a)
		mustContain(t, tool.Name, msg, "scope read", "refused", "--scope write")
		refused++
	}
	if refused != len(args) {
		t.Errorf("%d writing tools refused, want %d", refused, len(args))
	}
	rs.ok(t, "readproof_resources_list", nil)
	rs.ok(t, "readproof_resolve", map[string]any{"uri": refundsURI + "@prod"})
	// Nothing the read token tried was written.
	hist := p.cli(t, "--json", "tag", "list", refundsURI)
	if strings.Contains(hist, `"x"`) {
		t.Errorf("tag x was set by a read token: %s", hist)
	}
	if _, _, err := p.run("manifest", "ro1"); err == nil {
		t.Error("run ro1 was started by a read token")
	}
}

// TestHTTPExpiredRevokedUnknown401: no token, an unknown token, an expired
// one and a revoked one all get 401 (the revocation reaches the running
// server); a live token gets 200.
func TestHTTPExpiredRevokedUnknown401(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	live := p.token(t, "live")
	short := p.token(t, "short", "--expires", "1h")
	gone := p.token(t, "gone")
	srv := p.serveHTTPIn(t)
	if c := srv.post(t, gone, listTools); c != http.StatusOK {
		t.Fatalf("gone before revocation: %d", c)
	}
	if c := srv.post(t, short, listTools); c != http.StatusOK {
		t.Fatalf("short before it expired: %d", c)
	}
	p.cli(t, "mcp", "token", "revoke", "gone", "--tokens", p.tokens())
	// The hour passes (the token was made with --expires 1s, and the test
	// slept 1.1 s).
	p.ageExpiry(t, "short", time.Hour, 2*time.Hour)
	for name, tok := range map[string]string{"none": "", "unknown": "rpmcp_" + strings.Repeat("0", 64), "garbage": "x", "expired": short, "revoked": gone} {
		if c := srv.post(t, tok, listTools); c != http.StatusUnauthorized {
			t.Errorf("%s token: status %d, want 401", name, c)
		}
	}
	if c := srv.post(t, live, listTools); c != http.StatusOK {
		t.Errorf("live token: %d", c)
	}
	if strings.Contains(string(srv.stderr.Bytes()), live[6:]) {
		t.Error("the server printed a token")
	}
}

// TestHTTPFloodGets429OtherTokenServed: one token flooding past its budget
// gets 429 with Retry-After, while another token is served at once.
func TestHTTPFloodGets429OtherTokenServed(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	flood := p.token(t, "flood")
	calm := p.token(t, "calm")
	// One request per 100 s beyond the burst: however slow the machine,
	// the flooding token's bucket cannot refill before the checks below.
	srv := p.serveHTTP(t, "--rate", "0.01", "--burst", "10")
	var wg sync.WaitGroup
	var n429, n200 atomic.Int64
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 10; j++ {
				switch srv.post(t, flood, listTools) {
				case http.StatusTooManyRequests:
					n429.Add(1)
				case http.StatusOK:
					n200.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if n429.Load() == 0 {
		t.Fatalf("80 requests at once from one token: no 429 (%d ok)", n200.Load())
	}
	if c := srv.post(t, calm, listTools); c != http.StatusOK {
		t.Errorf("the other token during the flood: %d, want 200", c)
	}
	if c := srv.post(t, flood, listTools); c != http.StatusTooManyRequests {
		t.Errorf("the flooding token right after: %d, want 429", c)
	}
	t.Logf("flood: %d × 429, %d × 200", n429.Load(), n200.Load())
}

// TestHTTPBodyLimit: a request body over --max-body gets 413.
func TestHTTPBodyLimit(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	srv := p.serveHTTP(t, "--max-body", "1024")
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"readproof_resolve","arguments":{"uri":"` + strings.Repeat("a", 2000) + `"}}}`
	if c := srv.post(t, tok, big); c != http.StatusRequestEntityTooLarge {
		t.Errorf("2 KB body with --max-body 1024: %d, want 413", c)
	}
	if c := srv.post(t, tok, listTools); c != http.StatusOK {
		t.Errorf("small body: %d", c)
	}
}

// TestHTTPGracefulShutdown: SIGTERM while a mount is fetching a slow
// source: the server stops listening, the mount finishes and is recorded,
// and the process exits 0.
func TestHTTPGracefulShutdown(t *testing.T) {
	t.Parallel()
	p, arrived, release := slowSource(t)
	tok := p.token(t, "w")
	srv := p.serveHTTP(t)
	s := srv.connect(t, tok)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "slow"})
	result := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "readproof_run_mount", Arguments: map[string]any{"run_id": "slow", "uri": "readproof://web/slow"}})
		if err != nil {
			t.Errorf("mount in flight during shutdown: %v", err)
		}
		result <- res
	}()
	select {
	case <-arrived:
	case res := <-result:
		t.Fatalf("the mount ended before the source answered: %s", text(res))
	case <-time.After(30 * time.Second):
		t.Fatal("the mount never reached the source")
	}
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	// The listener closes at once; the call in flight goes on.
	deadline := time.Now().Add(10 * time.Second)
	for {
		resp, err := http.Post(srv.url, "application/json", strings.NewReader(listTools))
		if err != nil {
			break
		}
		resp.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("still accepting connections 10 s after SIGTERM")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The operator is told at once that the server waits for the call,
	// and a second signal (a second Ctrl-C) is answered, not swallowed:
	// the call still finishes. Both used to go without a word until the
	// call ended, up to --shutdown-timeout later.
	waitStderr := func(want string) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(srv.stderr.Bytes()), want); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("stderr with a call in flight after SIGTERM:\n%s\nwant %q", srv.stderr.Bytes(), want)
			}
		}
	}
	waitStderr("stopping: no new requests; waiting up to 1m0s for the requests in flight")
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	waitStderr("still waiting for the requests in flight")
	release()
	res := <-result
	if res == nil || res.IsError {
		t.Fatalf("mount in flight: %v", res)
	}
	select {
	case err := <-srv.done:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, srv.stderr.Bytes())
		}
		srv.done <- err
	case <-time.After(20 * time.Second):
		t.Fatal("no exit after the last request finished")
	}
	mustContain(t, "stderr", string(srv.stderr.Bytes()), "requests in flight finished")
	p.cli(t, "run", "commit", "slow")
	var m struct {
		Entries []any `json:"entries"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "manifest", "slow")), &m); err != nil || len(m.Entries) != 1 {
		t.Fatalf("the mount in flight at SIGTERM was not recorded: %v %d", err, len(m.Entries))
	}
}

// TestHTTPCallerShown: what a token's caller writes names it, and the CLI
// shows it: `manifest` (caller line and --json), `tag history` (BY) and
// `receipts list` (CALLER) / `receipts show`.
func TestHTTPCallerShown(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	key := filepath.Join(p.home, "keys", "receipts.key")
	p.cli(t, "receipts", "key", "init", "--key", key)
	p.extra = []string{"READPROOF_RECEIPTS_KEY=" + key}
	tok := p.token(t, "agent-7")
	srv := p.serveHTTP(t, "--session", "s-http")
	s := srv.connect(t, tok)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "r1"})
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI})
	s.ok(t, "readproof_run_commit", map[string]any{"run_id": "r1"})
	s.ok(t, "readproof_tag_set", map[string]any{"uri": refundsURI, "tag": "prod"})
	m := s.ok(t, "readproof_manifest", map[string]any{"target": "r1"})
	if m["caller"] != "agent-7" {
		t.Errorf("readproof_manifest caller: %v", m["caller"])
	}

	mustContain(t, "manifest", p.cli(t, "manifest", "r1"), "\ncaller   agent-7\n")
	mustContain(t, "manifest --json", p.cli(t, "--json", "manifest", "r1"), `"caller": "agent-7"`)
	hist := p.cli(t, "tag", "history", refundsURI, "prod")
	mustContain(t, "tag history", hist, "NOTE\n", "by agent-7")
	list := p.cli(t, "receipts", "list", "s-http")
	mustContain(t, "receipts list", list, "CALLER", "readproof_run_commit  agent-7")
	if strings.Count(list, "agent-7") != 5 || strings.Count(list, "VALID\n")+strings.Count(list, " valid") < 1 {
		t.Errorf("receipts list: want 5 receipts by agent-7, all valid:\n%s", list)
	}
	var rows []struct {
		ID     string `json:"id"`
		Caller string `json:"caller"`
		Check  string `json:"check"`
	}
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "receipts", "list", "s-http")), &rows); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Caller != "agent-7" {
			t.Errorf("receipt %s: caller %q, check %s", r.ID, r.Caller, r.Check)
		}
	}
	if len(rows) > 0 {
		mustContain(t, "receipts show", p.cli(t, "receipts", "show", rows[0].ID), "caller   agent-7")
	}
	// Records that name a caller pass verify: manifests, tag moves, receipts.
	p.cli(t, "verify")
}

// TestHTTPConcurrencyLimit: with every slot taken, a request waits for one
// and then gets 503 with Retry-After; a slot freed serves the next.
func TestHTTPConcurrencyLimit(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	entered := make(chan struct{}, 4)
	h := mcpserver.LimitConcurrency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		if r.URL.Path == "/slow" {
			<-release
		}
	}), 1, 100*time.Millisecond)
	srv := httptest.NewServer(h)
	defer srv.Close()
	done := make(chan int, 1)
	go func() {
		resp, err := http.Get(srv.URL + "/slow")
		if err != nil {
			done <- 0
			return
		}
		resp.Body.Close()
		done <- resp.StatusCode
	}()
	<-entered
	resp, err := http.Get(srv.URL + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("with the only slot taken: %d, Retry-After %q; want 503 with Retry-After", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	close(release)
	if c := <-done; c != http.StatusOK {
		t.Errorf("the slow request: %d", c)
	}
	resp, err = http.Get(srv.URL + "/fast")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the slot was freed: %d", resp.StatusCode)
	}
}

// TestHTTPTLS: with --tls-cert and --tls-key the server speaks HTTPS (and
// --public is allowed on it); a certificate that does not load is refused
// at start with exit 2.
func TestHTTPTLS(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	certPEM, keyPEM := selfSigned(t)
	cert, key := filepath.Join(p.home, "cert.pem"), filepath.Join(p.home, "key.pem")
	if err := os.WriteFile(cert, certPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(key, keyPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, errOut, err := p.run("mcp", "--http", "127.0.0.1:0", "--tokens", p.tokens(), "--tls-cert", key, "--tls-key", key); err == nil || !strings.Contains(errOut, "hint: give a PEM certificate") {
		t.Errorf("a key given as the certificate: %v\n%s", err, errOut)
	}
	srv := p.serveHTTP(t, "--public", "--tls-cert", cert, "--tls-key", key)
	if !strings.HasPrefix(srv.url, "https://") {
		t.Fatalf("TLS server URL %s", srv.url)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(certPEM)
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader(listTools))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("tools/list over HTTPS: %d", resp.StatusCode)
	}
}

// selfSigned returns a PEM certificate for 127.0.0.1 and its PEM key.
func selfSigned(t testing.TB) ([]byte, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder})
}

// TestHTTPPolicyReadLive: a resource added to readproof.toml while the
// server runs is listed by the next request (the parsed policy is kept
// only while the file is unchanged).
func TestHTTPPolicyReadLive(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "r", "--scope", "read")
	srv := p.serveHTTPIn(t)
	s := srv.connect(t, tok)
	if n := len(list(t, s.ok(t, "readproof_resources_list", nil)["resources"])); n != 1 {
		t.Fatalf("%d resources before, want 1", n)
	}
	p.write(t, "policies/late.md", "late\n")
	p.cli(t, "resource", "add", "readproof://demo/policies/late", "--source-type", "filesystem", "--path", "policies/late.md")
	if n := len(list(t, s.ok(t, "readproof_resources_list", nil)["resources"])); n != 2 {
		t.Fatalf("%d resources after resource add, want 2", n)
	}
}

// TestHTTPRunBelongsToItsCaller: one token cannot mount into or commit
// a run another token started (whose manifest would name the
// other caller for its entries); the starter's own calls go on.
func TestHTTPRunBelongsToItsCaller(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	alice, bob := p.token(t, "alice"), p.token(t, "bob")
	srv := p.serveHTTP(t)
	a, b := srv.connect(t, alice), srv.connect(t, bob)
	a.ok(t, "readproof_run_start", map[string]any{"run_id": "r1"})
	a.ok(t, "readproof_run_mount", map[string]any{"run_id": "r1", "uri": refundsURI})
	for _, tool := range []string{"readproof_run_mount", "readproof_run_commit"} {
		args := map[string]any{"run_id": "r1"}
		if tool == "readproof_run_mount" {
			args["uri"] = refundsURI
		}
		mustContain(t, tool+" by bob", b.fail(t, tool, args), `run r1 was started by caller "alice"`, "start a run of your own")
	}
	a.ok(t, "readproof_run_commit", map[string]any{"run_id": "r1"})
	m := a.ok(t, "readproof_manifest", map[string]any{"target": "r1"})
	if m["caller"] != "alice" || len(m["entries"].([]any)) != 1 {
		t.Fatalf("manifest of alice's run: caller %v, entries %v", m["caller"], m["entries"])
	}
}
