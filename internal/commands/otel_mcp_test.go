package commands

import (
	"bufio"
	"context"
	"encoding/hex"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
)

// headerRT adds fixed headers to every request.
type headerRT map[string]string

func (h headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// firstHeader adds one header to the first request only (an MCP
// session's initialize).
type firstHeader struct {
	http.RoundTripper
	name, value string
	sent        atomic.Bool
}

func (f *firstHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	if f.sent.CompareAndSwap(false, true) {
		r = r.Clone(r.Context())
		r.Header.Set(f.name, f.value)
	}
	return f.RoundTripper.RoundTrip(r)
}

// TestOTelMCPHTTPAndKeys runs the real CLI with an OTLP receiver on
// 127.0.0.1: `mcp --http` serving two tool calls and a resource read (one
// call under the client's traceparent header, one without), a probed mount
// and an `exec` with a receipt key. Each MCP call's span is in the trace
// its own header names (or a new one), with the GenAI attributes; and no
// exported string holds the MCP bearer token, a probe sentinel, the probe
// or receipt key, the OTLP header or the document.
func TestOTelMCPHTTPAndKeys(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	const (
		otlpKey  = "otlp-key-0b7e2c9d4f1a6358"
		docText  = "Refunds within 30 days; doc-secret-9d0c1b2a3e4f5a6b.\n"
		traceID  = "3e1d5c7b9a0f2e4d6c8b0a1f3e5d7c9b"
		parentID = "0f1e2d3c4b5a6978"
		uri      = "readproof://demo/policy"
		// the trace of the request that opens the last session
		openerTrace = "9a8b7c6d5e4f30211203f4e5d6c7b8a9"
	)
	recv := newOTLPReceiver(t)
	dir, home := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "policy.md"), []byte(docText), 0o644); err != nil {
		t.Fatal(err)
	}
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config")}
	on := append(append([]string(nil), base...), "OTEL_EXPORTER_OTLP_ENDPOINT="+recv.srv.URL, "OTEL_EXPORTER_OTLP_HEADERS=authorization=Bearer%20"+otlpKey)
	run := func(env []string, args ...string) string {
		t.Helper()
		stdout, stderr, err := readproofCmd(t, dir, env, args...)
		if err != nil {
			t.Fatalf("%v: %v\n%s", args, err, stderr)
		}
		if strings.Contains(stderr, "telemetry") {
			t.Errorf("%v: %s", args, stderr)
		}
		return stdout
	}
	run(base, "init")
	run(base, "resource", "add", uri, "--source-type", "filesystem", "--path", "policy.md")
	run(base, "probe", "key", "init")
	run(base, "receipts", "key", "init")
	token := strings.TrimSpace(run(base, "mcp", "token", "add", "agent"))
	run(on, "run", "start", "p1")
	mounted := run(on, "run", "mount", "--probe", "p1", uri)
	sentinel := regexp.MustCompile(`\[readproof probe: ([A-Za-z0-9_-]{16,})`).FindStringSubmatch(mounted)
	if sentinel == nil {
		t.Fatalf("no probe line in %q", mounted)
	}
	run(on, "run", "commit", "p1")
	run(on, "exec", "--session", "s1", "--", "true")

	// mcp --http on 127.0.0.1, stopped with SIGTERM (which flushes its spans).
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "readproof")
	if err := os.Symlink(exe, bin); err != nil {
		t.Fatal(err)
	}
	srv := exec.Command(bin, "mcp", "--http", "127.0.0.1:0")
	srv.Dir, srv.Env = dir, on
	errPipe, err := srv.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer srv.Process.Kill()
	sc := bufio.NewScanner(errPipe)
	var addr string
	var srvErr []string
	for addr == "" && sc.Scan() {
		srvErr = append(srvErr, sc.Text())
		if m := regexp.MustCompile(` on (http://127\.0\.0\.1:\d+/)$`).FindStringSubmatch(sc.Text()); m != nil {
			addr = m[1]
		}
	}
	if addr == "" {
		t.Fatalf("mcp --http printed no address: %q", srvErr)
	}
	drained := make(chan struct{})
	go func() {
		for sc.Scan() {
			srvErr = append(srvErr, sc.Text())
		}
		close(drained)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	call := func(headers headerRT, fn func(*mcp.ClientSession)) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
			&mcp.StreamableClientTransport{Endpoint: addr, HTTPClient: &http.Client{Transport: headers}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		fn(cs)
	}
	auth := "Bearer " + token
	call(headerRT{"Authorization": auth, "traceparent": "00-" + traceID + "-" + parentID + "-01"}, func(cs *mcp.ClientSession) {
		if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_resolve", Arguments: map[string]any{"uri": uri}}); err != nil || res.IsError {
			t.Fatalf("resolve: %v %v", err, res)
		}
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri}); err != nil {
			t.Fatalf("resources/read: %v", err)
		}
	})
	// A session opened under a traceparent whose later call sends none:
	// the call starts a trace of its own, not the opening request's.
	firstOnly := &firstHeader{RoundTripper: headerRT{"Authorization": auth}, name: "traceparent", value: "00-" + openerTrace + "-" + parentID + "-01"}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.StreamableClientTransport{Endpoint: addr, HTTPClient: &http.Client{Transport: firstOnly}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_history", Arguments: map[string]any{"uri": uri}}); err != nil || res.IsError {
		t.Fatalf("history: %v %v", err, res)
	}
	cs.Close()
	if err := srv.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-drained
	if err := srv.Wait(); err != nil {
		t.Fatalf("mcp --http: %v\n%s", err, strings.Join(srvErr, "\n"))
	}
	if s := strings.Join(srvErr, "\n"); strings.Contains(s, "telemetry") || strings.Contains(s, token) {
		t.Errorf("mcp --http stderr: %s", s)
	}

	spans, resources := recv.spans()
	byName := map[string][]*tracepb.Span{}
	for _, s := range spans {
		byName[s.Name] = append(byName[s.Name], s)
	}
	t.Logf("spans: %v", spanNames(spans))
	one := func(name string) *tracepb.Span {
		if len(byName[name]) != 1 {
			t.Fatalf("want one %s span, got %v", name, spanNames(spans))
		}
		return byName[name][0]
	}
	resolve, read, history := one("execute_tool readproof_resolve"), one("resources/read"), one("execute_tool readproof_history")
	for _, s := range []*tracepb.Span{resolve, read} {
		if hex.EncodeToString(s.TraceId) != traceID || hex.EncodeToString(s.ParentSpanId) != parentID || s.Kind != tracepb.Span_SPAN_KIND_SERVER {
			t.Errorf("%s: trace %x parent %x kind %v, want the traceparent header's, server", s.Name, s.TraceId, s.ParentSpanId, s.Kind)
		}
		if got, _ := attrString(s.Attributes, "gen_ai.data_source.id"); got != uri {
			t.Errorf("%s: gen_ai.data_source.id %q", s.Name, got)
		}
	}
	if got, _ := attrString(read.Attributes, "mcp.resource.uri"); got != uri {
		t.Errorf("resources/read: mcp.resource.uri %q", got)
	}
	if !firstOnly.sent.Load() {
		t.Fatal("the session was not opened under a traceparent: the check proves nothing")
	}
	if got := hex.EncodeToString(history.TraceId); got == traceID || got == openerTrace || len(history.ParentSpanId) != 0 {
		t.Errorf("a call without traceparent joined another trace: %x under %x", history.TraceId, history.ParentSpanId)
	}
	for k, want := range map[string]string{"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "readproof_resolve", "gen_ai.tool.type": "function", "mcp.method.name": "tools/call"} {
		if got, _ := attrString(resolve.Attributes, k); got != want {
			t.Errorf("resolve call %s = %q, want %q", k, got, want)
		}
	}

	// Nothing secret in any exported string.
	forbidden := []string{token, strings.TrimPrefix(token, "rpmcp_"), sentinel[1], otlpKey, "doc-secret-9d0c1b2a3e4f5a6b", "Refunds within 30 days"}
	keyish := regexp.MustCompile(`[A-Za-z0-9_+/=-]{16,}`)
	keys := 0
	filepath.WalkDir(filepath.Join(home, ".config"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if strings.HasSuffix(p, ".key") {
			keys++
		}
		for _, k := range keyish.FindAllString(string(b), -1) {
			if !strings.Contains(k, "readproof") {
				forbidden = append(forbidden, k)
			}
		}
		return nil
	})
	if keys < 2 || len(forbidden) < 8 {
		t.Fatalf("found %d key files under %s: the scan would prove nothing", keys, home)
	}
	noneHolds(t, exportedStrings(resources, spans), forbidden)
}
