package telemetry

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

func envOf(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestConfigFromEnv(t *testing.T) {
	for _, c := range []struct {
		name     string
		env      map[string]string
		on       bool
		endpoint string
		err      string
	}{
		{name: "nothing set", env: nil},
		{name: "base endpoint", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/"}, on: true, endpoint: "http://127.0.0.1:4318/v1/traces"},
		{name: "signal endpoint as is", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "https://b:2/custom"}, on: true, endpoint: "https://b:2/custom"},
		{name: "exporter otlp alone", env: map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, on: true, endpoint: DefaultEndpoint},
		{name: "sdk disabled", env: map[string]string{"OTEL_SDK_DISABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1"}},
		{name: "exporter none", env: map[string]string{"OTEL_TRACES_EXPORTER": "none", "OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1"}},
		{name: "other exporter", env: map[string]string{"OTEL_TRACES_EXPORTER": "zipkin"}, err: "otlp only"},
		{name: "grpc", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, err: "http/protobuf only"},
		{name: "signal protocol wins", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf"}, on: true, endpoint: "http://a:1/v1/traces"},
		{name: "not a url", env: map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "user:s3cret@host"}, err: "not an http(s) URL"},
		{name: "bad timeout", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TIMEOUT": "soon"}, err: "milliseconds"},
		{name: "timeout past time.Duration", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_TIMEOUT": "9999999999999"}, err: "milliseconds"},
		{name: "bad compression", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_COMPRESSION": "zstd"}, err: "gzip or none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, on, err := ConfigFromEnv(envOf(c.env))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) || on {
					t.Fatalf("got on=%v err %v, want an error with %q", on, err, c.err)
				}
				if strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("the error quotes a credential: %v", err)
				}
				return
			}
			if err != nil || on != c.on || cfg.Endpoint != c.endpoint {
				t.Fatalf("got on=%v endpoint %q err %v, want on=%v endpoint %q", on, cfg.Endpoint, err, c.on, c.endpoint)
			}
		})
	}
}

func TestConfigHeadersAndTimeout(t *testing.T) {
	cfg, on, err := ConfigFromEnv(envOf(map[string]string{
		"OTEL_EXPORTER_OTLP_ENDPOINT":        "http://a:1",
		"OTEL_EXPORTER_OTLP_HEADERS":         "api-key=one,x-b=two%20words",
		"OTEL_EXPORTER_OTLP_TRACES_HEADERS":  "api-key=override",
		"OTEL_EXPORTER_OTLP_TRACES_TIMEOUT":  "250",
		"OTEL_EXPORTER_OTLP_TIMEOUT":         "9000",
		"OTEL_EXPORTER_OTLP_COMPRESSION":     "gzip",
		"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/protobuf",
	}))
	if err != nil || !on {
		t.Fatal(on, err)
	}
	if cfg.Headers["api-key"] != "override" || cfg.Headers["x-b"] != "two words" {
		t.Errorf("headers %v", cfg.Headers)
	}
	if cfg.Timeout != 250*time.Millisecond || !cfg.Gzip {
		t.Errorf("timeout %v gzip %v", cfg.Timeout, cfg.Gzip)
	}
	_, _, err = ConfigFromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_HEADERS": "novalue-secret-77"}))
	if err == nil || strings.Contains(err.Error(), "novalue-secret-77") {
		t.Errorf("a malformed header list: %v", err)
	}
	for _, bad := range []string{"Authorization: Basic c2VjcmV0LTk5==", "x-key=ab%0Ac2VjcmV0LTk5", "sk/c2VjcmV0LTk5=1"} {
		_, on, err := ConfigFromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_HEADERS": bad}))
		if err == nil || on || strings.Contains(err.Error(), "c2VjcmV0LTk5") {
			t.Errorf("headers %q: on %v, error %v", bad, on, err)
		}
	}
	_, _, err = ConfigFromEnv(envOf(map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://a:1", "OTEL_EXPORTER_OTLP_HEADERS": "k=%zzsecret-88"}))
	if err == nil || strings.Contains(err.Error(), "secret-88") {
		t.Errorf("a bad percent-encoding: %v", err)
	}
}

// FuzzParseHeaders: the header list parser never panics, never quotes a
// value in its errors, and what it accepts round-trips through the same
// encoding.
func FuzzParseHeaders(f *testing.F) {
	for _, s := range []string{"", "a=b", "a=b,c=d", " a = b ,", "a=%20x", "=x", "a", "a=%zz", "a=b=c", ",,,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := map[string]string{}
		err := parseHeaders(s, got)
		if err != nil {
			for _, item := range strings.Split(s, ",") {
				if _, v, ok := strings.Cut(item, "="); ok && len(strings.TrimSpace(v)) > 3 && strings.Contains(err.Error(), strings.TrimSpace(v)) && !strings.Contains(strings.SplitN(item, "=", 2)[0], strings.TrimSpace(v)) {
					t.Fatalf("error %q quotes the value %q", err, v)
				}
			}
			return
		}
		for k := range got {
			if k == "" || strings.TrimSpace(k) != k {
				t.Fatalf("key %q accepted", k)
			}
		}
	})
}

// TestOffPathRecordsNothing: unconfigured, Command builds no provider and
// spans are no-ops; TRACEPARENT still gives the trace id.
func TestOffPathRecordsNothing(t *testing.T) {
	ctx, end := Command(context.Background(), CommandOptions{Getenv: envOf(nil), Path: "run"})
	if Enabled(ctx) || TraceID(ctx) != "" {
		t.Fatal("telemetry on without configuration")
	}
	_, span := Start(ctx, SpanResolve, attribute.String(KeyURI, "readproof://a/b"))
	if span.IsRecording() {
		t.Fatal("a span records with telemetry off")
	}
	end(0)
	ctx, end = Command(context.Background(), CommandOptions{Getenv: envOf(map[string]string{"TRACEPARENT": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}), Path: "run"})
	defer end(0)
	if Enabled(ctx) || TraceID(ctx) != "4bf92f3577b34da6a3ce929d0e0e4736" {
		t.Fatalf("TRACEPARENT alone: enabled %v trace id %q", Enabled(ctx), TraceID(ctx))
	}
	if ChildEnv(ctx, []string{"A=1"}) != nil {
		t.Fatal("ChildEnv rewrote the environment with telemetry off")
	}
	bad := Extract(context.Background(), "00-zz-00f067aa0ba902b7-01", "")
	if TraceID(bad) != "" {
		t.Fatal("a malformed traceparent was accepted")
	}
}

// TestEncodeDecodes: the exporter's protobuf decodes with the generated
// OTLP types into the same spans, attributes of every type included.
func TestEncodeDecodes(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	ctx := Extract(context.Background(), "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", "k=v")
	ctx = WithProvider(ctx, tp)
	_, span := StartKind(ctx, "execute_tool x", trace.SpanKindServer,
		attribute.String("s", "str"), attribute.Bool("b", true), attribute.Int64("i", -7), attribute.Float64("f", 1.5),
		attribute.StringSlice("ss", []string{"a", "b"}), attribute.Int64Slice("is", []int64{1, 2}))
	span.AddEvent("ev", trace.WithAttributes(attribute.String("e", "1")))
	span.SetStatus(codes.Error, "")
	span.End()
	stubs := mem.GetSpans() // the syncer exported it at End; Shutdown would clear it
	defer tp.Shutdown(context.Background())
	if len(stubs) != 1 {
		t.Fatalf("%d spans", len(stubs))
	}
	// An ExportTraceServiceRequest has the wire form of TracesData (field 1:
	// repeated ResourceSpans); decoding it as TracesData keeps the collector
	// package, and the gRPC it pulls in, out of this test binary (about 1 s
	// less CPU to link it in every `go test ./...`).
	var req tracepb.TracesData
	if err := proto.Unmarshal(encodeRequest(stubs.Snapshots()), &req); err != nil {
		t.Fatal(err)
	}
	got := req.ResourceSpans[0].ScopeSpans[0]
	if got.Scope.Name != ScopeName {
		t.Errorf("scope %q", got.Scope.Name)
	}
	s := got.Spans[0]
	if s.Name != "execute_tool x" || s.Kind != 2 || s.TraceState != "k=v" || s.Status.GetCode() != 2 || s.Flags != 0x301 {
		t.Errorf("span decoded as %v", s)
	}
	if s.EndTimeUnixNano < s.StartTimeUnixNano || s.StartTimeUnixNano == 0 {
		t.Errorf("times %d..%d", s.StartTimeUnixNano, s.EndTimeUnixNano)
	}
	want := map[string]string{"s": `string_value:"str"`, "b": "bool_value:true", "i": "int_value:-7", "f": "double_value:1.5",
		"ss": `array_value:{values:{string_value:"a"} values:{string_value:"b"}}`, "is": "array_value:{values:{int_value:1} values:{int_value:2}}"}
	if len(s.Attributes) != len(want) {
		t.Errorf("%d attributes", len(s.Attributes))
	}
	for _, kv := range s.Attributes {
		if g := strings.Join(strings.Fields(kv.Value.String()), " "); g != want[kv.Key] {
			t.Errorf("attribute %s decoded as %s, want %s", kv.Key, g, want[kv.Key])
		}
	}
	if len(s.Events) != 1 || s.Events[0].Name != "ev" {
		t.Errorf("events %v", s.Events)
	}
}

func TestEndMarksErrors(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	ctx := WithProvider(context.Background(), tp)
	_, span := Start(ctx, SpanFetch)
	End(span, errors.New("fetch https://user:pw-secret@host/x failed"))
	st := mem.GetSpans()[0]
	if st.Status.Code != codes.Error || strings.Contains(st.Status.Description, "pw-secret") {
		t.Errorf("status %v", st.Status)
	}
}

// TestAnnotateStopsAtMCPCalls: a commit inside an MCP call does not write
// its manifest onto the long-lived `mcp` command span.
func TestAnnotateStopsAtMCPCalls(t *testing.T) {
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	ctx := WithProvider(context.Background(), tp)
	ctx, root := tp.Tracer(ScopeName).Start(ctx, "mcp")
	ctx = context.WithValue(ctx, rootKey{}, root)
	Annotate(ctx, attribute.String(KeyManifestID, "cli"))
	cctx, call := StartMCP(ctx, ToolCall{Method: "tools/call", Tool: "readproof_run_commit"})
	Annotate(cctx, attribute.String(KeyManifestID, "from-call"))
	call.End()
	root.End()
	for _, s := range mem.GetSpans() {
		for _, kv := range s.Attributes {
			if kv.Key == KeyManifestID && s.Name == "mcp" && kv.Value.AsString() != "cli" {
				t.Errorf("the mcp command span got %s from a call", kv.Value.AsString())
			}
		}
	}
}

// TestEnvResourceKeepsValidParts: an OTEL_RESOURCE_ATTRIBUTES item without
// a value costs a warning, not the whole resource: OTEL_SERVICE_NAME and
// the well-formed items are still exported.
func TestEnvResourceKeepsValidParts(t *testing.T) {
	t.Setenv("OTEL_SERVICE_NAME", "svc-a")
	t.Setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment=prod,team-secret-41c7")
	var warned []string
	r := envResource(context.Background(), func(s string) { warned = append(warned, s) })
	got := map[string]string{}
	for _, kv := range r.Attributes() {
		got[string(kv.Key)] = kv.Value.AsString()
	}
	if got["service.name"] != "svc-a" || got["deployment.environment"] != "prod" {
		t.Errorf("resource %v, want service.name svc-a and deployment.environment prod", got)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "OTEL_RESOURCE_ATTRIBUTES") || strings.Contains(warned[0], "team-secret-41c7") {
		t.Errorf("warnings %q, want one naming OTEL_RESOURCE_ATTRIBUTES and quoting no item", warned)
	}
}

// TestEncodeMasksTokens: every string attribute the exporter encodes has
// its MCP bearer tokens masked (MaskTokens), in an array too; the span's
// other values are as they were.
func TestEncodeMasksTokens(t *testing.T) {
	const hexPart = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	mem := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(mem))
	defer tp.Shutdown(context.Background())
	ctx := WithProvider(context.Background(), tp)
	_, span := StartMCP(ctx, ToolCall{Method: "resources/read", DataSources: []string{"readproof://demo/rpmcp_" + hexPart}})
	span.SetAttributes(attribute.StringSlice("ss", []string{"RPMCP_" + strings.ToUpper(hexPart)}), attribute.String(KeyURI, "readproof://demo/a"))
	span.End()
	var req tracepb.TracesData
	if err := proto.Unmarshal(encodeRequest(mem.GetSpans().Snapshots()), &req); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, kv := range req.ResourceSpans[0].ScopeSpans[0].Spans[0].Attributes {
		got[kv.Key] = strings.Join(strings.Fields(kv.Value.String()), " ")
	}
	for k, want := range map[string]string{
		KeyGenAIDataSource: `string_value:"readproof://demo/rpmcp_[REDACTED]"`,
		KeyMCPResourceURI:  `string_value:"readproof://demo/rpmcp_[REDACTED]"`,
		"ss":               `array_value:{values:{string_value:"RPMCP_[REDACTED]"}}`,
		KeyURI:             `string_value:"readproof://demo/a"`,
	} {
		if got[k] != want {
			t.Errorf("%s encoded as %s, want %s", k, got[k], want)
		}
	}
}
