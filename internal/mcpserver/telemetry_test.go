package mcpserver_test

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/telemetry"
)

// TestToolCallSpans: with a tracer provider in the server's context, each
// tool call is an "execute_tool NAME" span with the GenAI attributes
// (gen_ai.data_source.id is the URI the call names), the store's spans are
// its children, and the manifest a run commits records the trace id.
// Over HTTP, a call's traceparent header names its parent.
func TestToolCallSpans(t *testing.T) {
	p := demoProject(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	open := p.opener()
	s, err := mcpserver.New(mcpserver.Options{Open: open})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() }, nil)
	hs := httptest.NewServer(telemetry.Middleware(telemetry.WithProvider(ctx, tp))(handler))
	defer hs.Close()
	srv := hs.URL
	const parent = "00-1f0e2d3c4b5a69788796a5b4c3d2e1f0-a1b2c3d4e5f60718-01"
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv, HTTPClient: &http.Client{Transport: headerTransport{"traceparent": parent}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	for _, c := range []struct {
		name string
		args map[string]any
	}{
		{"readproof_run_start", map[string]any{"run_id": "traced"}},
		{"readproof_run_mount", map[string]any{"run_id": "traced", "uri": refundsURI}},
		{"readproof_run_commit", map[string]any{"run_id": "traced"}},
	} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.name, Arguments: c.args})
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %v", c.name, err, res)
		}
	}
	spans := exp.GetSpans()
	byName := map[string]tracetest.SpanStub{}
	for _, sp := range spans {
		byName[sp.Name] = sp
	}
	mount, ok := byName["execute_tool readproof_run_mount"]
	if !ok {
		t.Fatalf("no tool span for readproof_run_mount among %d spans", len(spans))
	}
	attrs := map[string]string{}
	for _, kv := range mount.Attributes {
		attrs[string(kv.Key)] = kv.Value.String()
	}
	for k, want := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "readproof_run_mount",
		"gen_ai.data_source.id": refundsURI, "mcp.method.name": "tools/call",
	} {
		if attrs[k] != want {
			t.Errorf("mount span %s = %q, want %q", k, attrs[k], want)
		}
	}
	if got := mount.Parent.SpanID().String(); got != "a1b2c3d4e5f60718" || !mount.Parent.IsRemote() {
		t.Errorf("mount span's parent %s (remote %v), want the traceparent header's", got, mount.Parent.IsRemote())
	}
	if m, ok := byName["readproof.mount"]; !ok || m.Parent.SpanID() != mount.SpanContext.SpanID() {
		t.Errorf("the store's mount span is not a child of the tool span")
	}
	commit, ok := byName["readproof.commit"]
	if !ok {
		t.Fatal("no commit span")
	}
	var manifestID string
	for _, kv := range commit.Attributes {
		if kv.Key == telemetry.KeyManifestID {
			manifestID = kv.Value.AsString()
		}
	}
	st, err := open()
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	m, err := st.Manifest(manifestID)
	if err != nil {
		t.Fatal(err)
	}
	if m.TraceID != "1f0e2d3c4b5a69788796a5b4c3d2e1f0" {
		t.Errorf("the manifest records trace id %q, want the caller's", m.TraceID)
	}
}

// headerTransport adds fixed headers to every request.
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestServeHTTPJoinsTraceparent: `mcp --http` (ServeHTTP, stateless, behind
// the token check) exports each call's span with ctx's provider, as a child
// of the call's traceparent header; the token is not in any attribute.
func TestServeHTTPJoinsTraceparent(t *testing.T) {
	p := demoProject(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	open := p.opener()
	const token = "rpmcp_9c2e71d05ab34f689c2e71d05ab34f689c2e71d05ab34f689c2e71d05ab34f68"
	verify := func(tok string) (mcpauth.Caller, error) {
		if tok != token {
			return mcpauth.Caller{}, mcpauth.ErrUnknown
		}
		return mcpauth.Caller{Name: "agent-1", Scope: mcpauth.ScopeWrite}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(telemetry.WithProvider(context.Background(), tp))
	done := make(chan error, 1)
	go func() {
		done <- mcpserver.ServeHTTP(ctx, mcpserver.Options{Open: open}, mcpserver.HTTPOptions{Verify: verify}, ln)
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	cctx, ccancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer ccancel()
	const parent = "00-7a3c1e5f9b2d4086a1c3e5f7092b4d6f-1122334455667788-01"
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: "http://" + ln.Addr().String(),
		HTTPClient: &http.Client{Transport: headerTransport{"traceparent": parent, "Authorization": "Bearer " + token}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: "readproof_resolve", Arguments: map[string]any{"uri": refundsURI}})
	if err != nil || res.IsError {
		t.Fatalf("resolve: %v %v", err, res)
	}
	var call *tracetest.SpanStub
	spans := exp.GetSpans()
	for i, sp := range spans {
		if sp.Name == "execute_tool readproof_resolve" {
			call = &spans[i]
		}
		for _, kv := range sp.Attributes {
			if strings.Contains(kv.Value.String(), token) {
				t.Errorf("span %s attribute %s holds the token", sp.Name, kv.Key)
			}
		}
	}
	if call == nil {
		t.Fatalf("no execute_tool span among %d", len(spans))
	}
	if call.SpanContext.TraceID().String() != "7a3c1e5f9b2d4086a1c3e5f7092b4d6f" || call.Parent.SpanID().String() != "1122334455667788" {
		t.Errorf("the call's span is in trace %s under %s, want the traceparent header's", call.SpanContext.TraceID(), call.Parent.SpanID())
	}
}

// TestUnknownToolNameNotExported: a tools/call naming no tool of this
// server is a span named "execute_tool" without gen_ai.tool.name: the name
// is the client's free text (any length, any bytes), which readproof does
// not export, as it exports no argument but a readproof URI. A tool error
// is status error with error.type tool_error.
func TestUnknownToolNameNotExported(t *testing.T) {
	p := demoProject(t)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	s, err := mcpserver.New(mcpserver.Options{Open: p.opener()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	handler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.MCP() }, nil)
	hs := httptest.NewServer(telemetry.Middleware(telemetry.WithProvider(ctx, tp))(handler))
	defer hs.Close()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	const planted = "agent-text-5c1e9f3b"
	name := planted + "\x1b[2J" + strings.Repeat("x", 4096)
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name}); err == nil && !res.IsError {
		t.Fatal("an unknown tool was called")
	}
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_resources_list"}); err != nil || res.IsError {
		t.Fatalf("resources_list: %v %v", err, res)
	}
	// A tool error: status error, error.type tool_error, its message not exported.
	if res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_resolve", Arguments: map[string]any{"uri": "readproof://demo/not-declared"}}); err != nil || !res.IsError {
		t.Fatalf("resolve of an undeclared URI: %v %v", err, res)
	}
	var names []string
	for _, sp := range exp.GetSpans() {
		if sp.Name == "execute_tool readproof_resolve" {
			et := ""
			for _, kv := range sp.Attributes {
				if kv.Key == "error.type" {
					et = kv.Value.AsString()
				}
			}
			if sp.Status.Code != codes.Error || sp.Status.Description != "" || et != "tool_error" {
				t.Errorf("failed tool call: status %v, error.type %q; want error, no description, tool_error", sp.Status, et)
			}
		}
		names = append(names, sp.Name)
		if strings.Contains(sp.Name, planted) {
			t.Errorf("a span is named by the client's text: %.60q", sp.Name)
		}
		for _, kv := range sp.Attributes {
			if strings.Contains(kv.Value.String(), planted) {
				t.Errorf("span %.60q attribute %s holds the client's text", sp.Name, kv.Key)
			}
		}
	}
	if !slices.Contains(names, "execute_tool") || !slices.Contains(names, "execute_tool readproof_resources_list") || !slices.Contains(names, "execute_tool readproof_resolve") {
		t.Errorf("spans %.200q, want execute_tool, execute_tool readproof_resources_list and execute_tool readproof_resolve", names)
	}
}
