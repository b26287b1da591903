package mcpserver_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
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
	open := func() (*store.Store, error) {
		pol, err := policy.Load(p.config)
		if err != nil {
			return nil, err
		}
		return store.Open(p.store, pol, store.Options{})
	}
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
		attrs[string(kv.Key)] = kv.Value.Emit()
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
