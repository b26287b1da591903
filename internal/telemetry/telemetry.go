package telemetry

import (
	"context"
	"strconv"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every readproof span.
const ScopeName = "github.com/readproof/readproof"

// Span names (docs/observability.md). The command's root span is named by
// the command path ("run", "tag set"); an MCP tool call's span is
// "execute_tool " + the tool name.
const (
	SpanResolve = "readproof.resolve" // one document resolved under its policy or tag
	SpanFetch   = "readproof.fetch"   // the source read for it
	SpanMount   = "readproof.mount"   // a document recorded into an open run
	SpanCommit  = "readproof.commit"  // a run frozen into a manifest
	SpanPush    = "readproof.push"
	SpanPull    = "readproof.pull"
	SpanVerify  = "readproof.verify"
	SpanExec    = "readproof.exec" // the command `readproof exec` runs
)

// providerKey carries the tracer provider of a configured process in a
// context; rootKey the command's root span.
type (
	providerKey struct{}
	rootKey     struct{}
)

// WithProvider returns ctx carrying tp: spans started from it are recorded
// by tp. Command does this when telemetry is configured.
func WithProvider(ctx context.Context, tp trace.TracerProvider) context.Context {
	return context.WithValue(ctx, providerKey{}, tp)
}

func providerOf(ctx context.Context) trace.TracerProvider {
	tp, _ := ctx.Value(providerKey{}).(trace.TracerProvider)
	return tp
}

// Enabled reports whether spans started from ctx are recorded.
func Enabled(ctx context.Context) bool { return providerOf(ctx) != nil }

// Start starts a span named name as a child of ctx's span. Without a
// configured provider in ctx it returns ctx and a no-op span, allocating
// nothing but the attribute slice the caller built.
func Start(ctx context.Context, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	return StartKind(ctx, name, trace.SpanKindInternal, attrs...)
}

// StartKind is Start with a span kind.
func StartKind(ctx context.Context, name string, kind trace.SpanKind, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	tp := providerOf(ctx)
	if tp == nil {
		return ctx, noopSpan(ctx)
	}
	return tp.Tracer(ScopeName).Start(ctx, name, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// noopSpan is the span of a context without a provider: it records nothing.
// The caller keeps its ctx unchanged, so the trace context that came in
// (TRACEPARENT) still names the caller's span.
func noopSpan(context.Context) trace.Span { return noop.Span{} }

// End ends span, marking it failed when err is not nil. The error's text is
// not exported (it may quote a path or a source); error.type carries its
// class, which the caller may refine with ErrorType before End.
func End(span trace.Span, err error) {
	if err != nil && span.IsRecording() {
		span.SetStatus(codes.Error, "")
		span.SetAttributes(attribute.String(KeyErrorType, "error"))
	}
	span.End()
}

// Annotate sets attrs on the command's root span in ctx: the command span
// carries the outcome of the command, such as the manifest a run
// committed. Inside an MCP call (StartMCP) it does nothing: the call's own
// spans carry what it did.
func Annotate(ctx context.Context, attrs ...attribute.KeyValue) {
	if root, ok := ctx.Value(rootKey{}).(trace.Span); ok {
		root.SetAttributes(attrs...)
	}
}

// TraceID is the W3C trace id of ctx's span (32 lowercase hex digits), or
// "" when ctx carries no valid trace context. A context that came in
// through TRACEPARENT has one even when telemetry is off.
func TraceID(ctx context.Context) string {
	sc := trace.SpanContextFromContext(ctx)
	if !sc.TraceID().IsValid() {
		return ""
	}
	return sc.TraceID().String()
}

// Traceparent returns the W3C traceparent and tracestate values naming
// ctx's span, for a child process; "" when ctx has no valid span context.
func Traceparent(ctx context.Context) (traceparent, tracestate string) {
	c := propagation.MapCarrier{}
	propagation.TraceContext{}.Inject(ctx, c)
	return c["traceparent"], c["tracestate"]
}

// Extract returns ctx with the remote span context that traceparent and
// tracestate name; ctx unchanged when traceparent is absent or malformed
// (a malformed one is ignored, as the W3C rules say).
func Extract(ctx context.Context, traceparent, tracestate string) context.Context {
	if traceparent == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": traceparent}
	if tracestate != "" {
		c["tracestate"] = tracestate
	}
	return propagation.TraceContext{}.Extract(ctx, c)
}

// codeString is an exit code as error.type spells it.
func codeString(code int) string { return "exit_" + strconv.Itoa(code) }

// ChildEnv returns the environment for a child process started from ctx:
// environ with TRACEPARENT and TRACESTATE naming ctx's span, when
// telemetry is recording; nil (inherit environ unchanged, with whatever
// TRACEPARENT came in) otherwise.
func ChildEnv(ctx context.Context, environ []string) []string {
	if !Enabled(ctx) {
		return nil
	}
	tp, ts := Traceparent(ctx)
	if tp == "" {
		return nil
	}
	out := make([]string, 0, len(environ)+2)
	for _, kv := range environ {
		if strings.HasPrefix(kv, "TRACEPARENT=") || strings.HasPrefix(kv, "TRACESTATE=") {
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "TRACEPARENT="+tp)
	if ts != "" {
		out = append(out, "TRACESTATE="+ts)
	}
	return out
}
