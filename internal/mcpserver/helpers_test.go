package mcpserver_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/commands"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
)

// The test binary doubles as the readproof binary: with this variable set,
// TestMain runs the CLI instead of the tests, so every server in these
// tests is a real `readproof mcp` subprocess speaking over stdio.
const mainEnv = "READPROOF_MCPSERVER_TEST_MAIN"

func TestMain(m *testing.M) {
	// the tests' ~/.ssh/config is under their HOME, not the passwd
	// entry's home ssh reads (gitstore's sshUserHome)
	gitstore.SSHHomeFromEnvForTest()
	if os.Getenv(mainEnv) == "1" {
		os.Exit(commands.Main(os.Args, os.Stdin, os.Stdout, os.Stderr))
	}
	os.Exit(runIsolated(m))
}

// runIsolated runs the tests with HOME, XDG_CONFIG_HOME and APPDATA in an empty
// directory of their own and no READPROOF_ variable naming a key, a store
// or a policy: the servers run in this process find their default keys
// through os.UserConfigDir, which would otherwise be the developer's
// (TestNoDeveloperKeysInProcess).
func runIsolated(m *testing.M) int {
	home, err := os.MkdirTemp("", homeDirPrefix+"*")
	if err != nil {
		fmt.Fprintf(os.Stderr, "mcpserver tests: %v\n", err)
		return 1
	}
	defer os.RemoveAll(home)
	os.Setenv("HOME", home)
	os.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	// Windows' os.UserConfigDir (macOS' is under HOME already)
	os.Setenv("APPDATA", filepath.Join(home, "AppData", "Roaming"))
	for _, v := range []string{"READPROOF_RECEIPTS_KEY", "READPROOF_SIGNING_KEY", "READPROOF_MCP_TOKENS", "READPROOF_STORE", "READPROOF_CONFIG", "READPROOF_SESSION"} {
		os.Unsetenv(v)
	}
	return testproc.Run(m)
}

// project is a directory with readproof.toml, documents and a store.
type project struct {
	dir    string
	config string
	store  string
	home   string
	extra  []string // more environment for every process
}

const refundsURI = "readproof://demo/policies/refunds"

// newProject writes files (relative paths) and readproof.toml, and
// creates the store as `readproof init` does with the policy file present
// (store.Init), in this process: one child process fewer per project (28
// in this package) for a step none of these tests is about.
func newProject(t testing.TB, toml string, files map[string]string) *project {
	t.Helper()
	root := t.TempDir()
	p := &project{dir: filepath.Join(root, "proj"), home: filepath.Join(root, "home")}
	p.config = filepath.Join(p.dir, "readproof.toml")
	p.store = filepath.Join(p.dir, ".readproof")
	for _, d := range []string{p.dir, p.home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, body := range files {
		p.write(t, name, body)
	}
	if err := os.WriteFile(p.config, []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := store.Init(p.store); err != nil {
		t.Fatal(err)
	}
	return p
}

// demoProject is the refund demo: one filesystem resource.
func demoProject(t testing.TB) *project {
	return newProject(t, "version = 1\n\n[[resource]]\nuri = \""+refundsURI+"\"\ndescription = \"Refund policy\"\n"+
		"source = { type = \"filesystem\", path = \"policies/refunds.md\" }\n",
		map[string]string{"policies/refunds.md": "Products can be refunded within 30 days.\n"})
}

// opener opens p's store in process with p's policy, as Options.Open
// wants: a fresh Store for each call.
func (p *project) opener() func() (*store.Store, error) {
	return func() (*store.Store, error) {
		pol, err := policy.Load(p.config)
		if err != nil {
			return nil, err
		}
		return store.Open(p.store, pol, store.Options{})
	}
}

// declare appends a filesystem resource to readproof.toml, as `readproof
// resource add URI --source-type filesystem --path PATH` declares it (the
// default freshness policy), without a child process; the tests whose
// subject is resource add run the command.
func (p *project) declare(t testing.TB, uri, path string) {
	t.Helper()
	f, err := os.OpenFile(p.config, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = fmt.Fprintf(f, "\n[[resource]]\nuri = %q\nsource = { type = \"filesystem\", path = %q }\n", uri, path)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

func (p *project) write(t testing.TB, name, body string) {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func (p *project) env() []string {
	env := append(os.Environ(), mainEnv+"=1", "HOME="+p.home, "XDG_CONFIG_HOME="+filepath.Join(p.home, ".config"),
		"XDG_CACHE_HOME="+filepath.Join(p.home, ".cache"), "READPROOF_STORE=", "READPROOF_CONFIG=", "READPROOF_SESSION=", "READPROOF_RECEIPTS_KEY=", "READPROOF_SIGNING_KEY=", "READPROOF_MCP_TOKENS=")
	return append(env, p.extra...)
}

// cli runs readproof as a separate process and returns stdout; it fails
// the test on a non-zero exit.
func (p *project) cli(t testing.TB, args ...string) string {
	t.Helper()
	out, errOut, err := p.run(args...)
	if err != nil {
		t.Fatalf("readproof %s: %v\n%s", strings.Join(args, " "), err, errOut)
	}
	return out
}

func (p *project) run(args ...string) (string, string, error) {
	cmd := exec.Command(os.Args[0], append([]string{"--store", p.store, "--config", p.config}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	return out.String(), errb.String(), err
}

// server is a running `readproof mcp` subprocess (or, from serve, the same
// server in this process) with a connected client.
type server struct {
	cs     *mcp.ClientSession
	cmd    *exec.Cmd
	done   chan error           // serve: Run's result, instead of cmd
	stdout *testproc.SyncBuffer // every byte the server wrote to stdout
	stderr *testproc.SyncBuffer
	closed bool
}

// start runs `readproof --store S --config C mcp ARGS...` in p.dir and
// connects the go-sdk client to its stdin and stdout. At cleanup it closes
// the session, waits for the process and checks that stdout carried only
// JSON-RPC messages (and, without --verbose, that stderr stayed empty).
func (p *project) start(t testing.TB, args ...string) *server {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"--store", p.store, "--config", p.config, "mcp"}, args...)...)
	cmd.Dir = p.dir
	cmd.Env = p.env()
	s := &server{cmd: cmd, stdout: &testproc.SyncBuffer{}, stderr: &testproc.SyncBuffer{}}
	cmd.Stderr = s.stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "readproof-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(out, s.stdout)), Writer: in}, nil)
	if err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		t.Fatalf("connect: %v\nstderr: %s", err, s.stderr.Bytes())
	}
	s.cs = cs
	verbose := false
	for _, a := range args {
		if a == "--verbose" {
			verbose = true
		}
	}
	t.Cleanup(func() {
		s.stop(t)
		checkProtocolOnly(t, s.stdout.Bytes())
		if !verbose && len(s.stderr.Bytes()) > 0 {
			t.Errorf("readproof mcp wrote to stderr without --verbose:\n%s", s.stderr.Bytes())
		}
	})
	return s
}

// serve is start without the process, for the tests whose subject is what
// a tool or a resource answers rather than the command or the process:
// mcpserver.New with the options `readproof mcp` gives it without receipts
// or --verbose (p's store opened with p's policy on every request, the
// build's version), run in this process over the same line transport, with
// pipes for stdin and stdout. The cleanup checks are start's: stdout
// carried only JSON-RPC messages and Run ends with nil at stdin EOF. The
// process path (flags, start-up checks, exit codes, signals, stderr) keeps
// its own tests: the hostile-input, receipts, --verbose, start-failure and
// HTTP tests run the real subprocess. A child process costs about as much
// CPU as the calls most of these tests make.
func (p *project) serve(t testing.TB) *server {
	t.Helper()
	return p.serveWith(t, mcpserver.Options{})
}

// serveWith is serve with more options (ReceiptKey and Session, as the
// command sets them when a receipts key is configured); Open and Version
// are filled in (Open when it is nil).
func (p *project) serveWith(t testing.TB, opts mcpserver.Options) *server {
	t.Helper()
	if opts.Open == nil {
		opts.Open = p.opener()
	}
	opts.Version = buildinfo.Read().Version
	srv, err := mcpserver.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	s := &server{done: make(chan error, 1), stdout: &testproc.SyncBuffer{}, stderr: &testproc.SyncBuffer{}}
	go func() {
		err := srv.Run(context.Background(), inR, outW)
		outW.Close() // the client reads EOF, as from an exited process
		s.done <- err
	}()
	client := mcp.NewClient(&mcp.Implementation{Name: "readproof-test", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(outR, s.stdout)), Writer: inW}, nil)
	if err != nil {
		inW.Close()
		t.Fatalf("connect: %v", err)
	}
	s.cs = cs
	t.Cleanup(func() {
		s.stop(t)
		checkProtocolOnly(t, s.stdout.Bytes())
	})
	return s
}

// stop closes the session (stdin EOF) and waits for the server to exit 0.
func (s *server) stop(t testing.TB) {
	t.Helper()
	if s.closed {
		return
	}
	s.closed = true
	_ = s.cs.Close()
	if s.cmd == nil {
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("Run ended with %v", err)
			}
		case <-time.After(20 * time.Second):
			t.Errorf("the server did not return at stdin EOF")
		}
		return
	}
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("readproof mcp exited with %v\nstderr: %s", err, s.stderr.Bytes())
		}
	case <-time.After(20 * time.Second):
		_ = s.cmd.Process.Kill()
		t.Errorf("readproof mcp did not exit at stdin EOF")
	}
}

// checkProtocolOnly asserts that every line written to stdout is one
// JSON-RPC 2.0 message: a response with an id, or a notification.
func checkProtocolOnly(t testing.TB, out []byte) {
	t.Helper()
	if len(out) == 0 {
		t.Errorf("the server wrote nothing to stdout")
		return
	}
	if out[len(out)-1] != '\n' {
		t.Errorf("stdout does not end with a newline: %q", tail(out))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	n := 0
	for sc.Scan() {
		n++
		line := sc.Bytes()
		var msg struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Method  string          `json:"method"`
			Result  json.RawMessage `json:"result"`
			Error   json.RawMessage `json:"error"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		if err := dec.Decode(&msg); err != nil || dec.More() {
			t.Errorf("stdout line %d is not one JSON message: %q (%v)", n, tail(line), err)
			continue
		}
		if msg.JSONRPC != "2.0" {
			t.Errorf("stdout line %d is not JSON-RPC 2.0: %q", n, tail(line))
		}
		if msg.Method == "" && (len(msg.ID) == 0 || (msg.Result == nil) == (msg.Error == nil)) {
			t.Errorf("stdout line %d is neither a response nor a request: %q", n, tail(line))
		}
	}
	if err := sc.Err(); err != nil {
		t.Errorf("scan stdout: %v", err)
	}
}

func tail(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// call invokes a tool and returns the result; a protocol error fails the
// test.
func (s *server) call(t testing.TB, name string, args map[string]any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: protocol error: %v", name, err)
	}
	return res
}

// ok calls a tool that must succeed and returns its structured content,
// after checking the result shape: one short text block that is not the
// structured JSON again.
func (s *server) ok(t testing.TB, name string, args map[string]any) map[string]any {
	t.Helper()
	res := s.call(t, name, args)
	if res.IsError {
		t.Fatalf("%s %v: tool error: %s", name, args, text(res))
	}
	checkShape(t, name, res)
	m, ok := res.StructuredContent.(map[string]any)
	if !ok {
		t.Fatalf("%s: structuredContent is %T", name, res.StructuredContent)
	}
	return m
}

// fail calls a tool that must fail with a tool error and returns its text.
func (s *server) fail(t testing.TB, name string, args map[string]any) string {
	t.Helper()
	res := s.call(t, name, args)
	if !res.IsError {
		t.Fatalf("%s %v: want a tool error, got %s", name, args, text(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("%s: an error result carries structuredContent %v", name, res.StructuredContent)
	}
	return text(res)
}

func checkShape(t testing.TB, name string, res *mcp.CallToolResult) {
	t.Helper()
	if len(res.Content) != 1 {
		t.Fatalf("%s: %d content blocks, want exactly one text block", name, len(res.Content))
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("%s: content block is %T, want text", name, res.Content[0])
	}
	if len(tc.Text) > 4096 {
		t.Errorf("%s: the text block is %d bytes; it should be a short summary", name, len(tc.Text))
	}
	if strings.HasPrefix(strings.TrimSpace(tc.Text), "{") {
		t.Errorf("%s: the text block repeats JSON: %s", name, tail([]byte(tc.Text)))
	}
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// read reads a resource and returns its single content block.
func (s *server) read(t testing.TB, uri string) *mcp.ResourceContents {
	t.Helper()
	res, err := s.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 {
		t.Fatalf("resources/read %s: %d content blocks", uri, len(res.Contents))
	}
	return res.Contents[0]
}

// readErr reads a resource that must fail and returns the JSON-RPC error.
func (s *server) readErr(t testing.TB, uri string) *jsonrpc.Error {
	t.Helper()
	_, err := s.cs.ReadResource(ctxT(t), &mcp.ReadResourceParams{URI: uri})
	if err == nil {
		t.Fatalf("resources/read %s: want an error", uri)
	}
	var we *jsonrpc.Error
	if !errors.As(err, &we) {
		t.Fatalf("resources/read %s: error %v (%T) is not a JSON-RPC error", uri, err, err)
	}
	return we
}

func str(t testing.TB, m map[string]any, key string) string {
	t.Helper()
	v, ok := m[key].(string)
	if !ok {
		t.Fatalf("%q is %T (%v), want a string", key, m[key], m[key])
	}
	return v
}

func num(t testing.TB, m map[string]any, key string) int64 {
	t.Helper()
	v, ok := m[key].(float64)
	if !ok {
		t.Fatalf("%q is %T (%v), want a number", key, m[key], m[key])
	}
	return int64(v)
}

func obj(t testing.TB, v any) map[string]any {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%v is %T, want an object", v, v)
	}
	return m
}

func list(t testing.TB, v any) []any {
	t.Helper()
	l, ok := v.([]any)
	if !ok {
		t.Fatalf("%v is %T, want an array", v, v)
	}
	return l
}

func mustContain(t testing.TB, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s: %q does not contain %q", what, got, w)
		}
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
