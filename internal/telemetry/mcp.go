package telemetry

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// Middleware returns the HTTP middleware of `readproof mcp --http`: each
// request's context carries the tracer provider of base (the command's
// context) and the trace context of the request's traceparent and
// tracestate headers, so the spans of the request join the caller's trace.
// The header values themselves are never recorded.
func Middleware(base context.Context) func(http.Handler) http.Handler {
	tp := providerOf(base)
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ctx := r.Context()
			if tp != nil {
				ctx = WithProvider(ctx, tp)
			}
			if tpv := r.Header.Get("traceparent"); tpv != "" {
				ctx = Extract(ctx, tpv, r.Header.Get("tracestate"))
			}
			next.ServeHTTP(w, r.WithContext(ctx))
		})
	}
}

// ToolCall describes one MCP request for StartMCP.
type ToolCall struct {
	// Method is the MCP method: "tools/call" or "resources/read".
	Method string
	// Tool is the tool's name (tools/call), "" for a name the server has
	// no tool of.
	Tool string
	// DataSources are the readproof:// URIs the call names (resource
	// URIs, without secrets by construction); the first is
	// gen_ai.data_source.id.
	DataSources []string
	// Header is the HTTP request's header when the call came over HTTP:
	// its traceparent makes the span a child of the caller's span when
	// ctx carries no trace context of its own.
	Header http.Header
}

// StartMCP starts the span of one MCP tool call or resource read, with the
// GenAI and MCP semantic-convention attributes: "execute_tool TOOL" for a
// tool call, "resources/read" for a read. ctx supplies the tracer provider
// (the command's context over stdio; over HTTP the session's, which the
// SDK derives from the request that opened the session, so Middleware puts
// the provider there). A call that came over HTTP belongs to the trace its
// own traceparent header names, or starts a new one: never to the trace of
// the request that opened the session.
func StartMCP(ctx context.Context, call ToolCall) (context.Context, trace.Span) {
	if !Enabled(ctx) {
		return ctx, noopSpan(ctx)
	}
	if call.Header != nil {
		ctx = trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		if tpv := call.Header.Get("traceparent"); tpv != "" {
			ctx = Extract(ctx, tpv, call.Header.Get("tracestate"))
		}
	}
	attrs := []attribute.KeyValue{attribute.String(KeyMCPMethod, call.Method)}
	name := call.Method
	if call.Method == "tools/call" {
		// An unknown tool's span is "execute_tool" alone, without
		// gen_ai.tool.name (the semantic conventions' name when the tool
		// is not known).
		name = "execute_tool"
		attrs = append(attrs, attribute.String(KeyGenAIOperation, "execute_tool"))
		if call.Tool != "" {
			name += " " + call.Tool
			attrs = append(attrs, attribute.String(KeyGenAIToolName, call.Tool))
		}
		attrs = append(attrs, attribute.String(KeyGenAIToolType, "function"))
	}
	if len(call.DataSources) > 0 {
		attrs = append(attrs, attribute.String(KeyGenAIDataSource, call.DataSources[0]))
		if call.Method == "resources/read" {
			attrs = append(attrs, attribute.String(KeyMCPResourceURI, call.DataSources[0]))
		}
	}
	// A call is its own unit: what it commits is on its span, not on the
	// long-lived span of the `readproof mcp` command.
	ctx = context.WithValue(ctx, rootKey{}, nil)
	return StartKind(ctx, name, trace.SpanKindServer, attrs...)
}

// EndMCP ends an MCP span; failed is a tool result that reports an error
// (isError), err a protocol error.
func EndMCP(span trace.Span, failed bool, err error) {
	if failed && err == nil && span.IsRecording() {
		span.SetStatus(codes.Error, "")
		span.SetAttributes(attribute.String(KeyErrorType, "tool_error"))
	}
	End(span, err)
}
