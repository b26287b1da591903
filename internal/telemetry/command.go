package telemetry

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.37.0"
	"go.opentelemetry.io/otel/trace"
)

// CommandOptions configure Command.
type CommandOptions struct {
	// Getenv reads the environment (os.Getenv).
	Getenv func(string) string
	// Path is the command path ("run", "tag set"), the root span's name.
	Path string
	// Version is readproof's version (service.version).
	Version string
	// Warn receives one line per telemetry problem (a setting that cannot
	// be honoured, a failed export); telemetry never fails a command.
	Warn func(string)
}

// Command begins one command. It returns ctx carrying the trace context
// that came in through TRACEPARENT and TRACESTATE, and, when the
// environment configures traces, the tracer provider and the command's
// root span. end ends the root span with the command's exit code and
// flushes the spans, waiting at most FlushTimeout (or the export timeout,
// when smaller). Unconfigured, no SDK is built and end does nothing.
func Command(ctx context.Context, opts CommandOptions) (_ context.Context, end func(code int)) {
	ctx = Extract(ctx, opts.Getenv("TRACEPARENT"), opts.Getenv("TRACESTATE"))
	cfg, on, err := ConfigFromEnv(opts.Getenv)
	if err != nil && opts.Warn != nil {
		opts.Warn(err.Error())
	}
	if !on {
		return ctx, func(int) {}
	}
	w := &warnOnce{warn: opts.Warn}
	tp := newProvider(ctx, cfg, opts.Version, w.say)
	ctx = WithProvider(ctx, tp)
	ctx, root := tp.Tracer(ScopeName).Start(ctx, opts.Path,
		trace.WithSpanKind(trace.SpanKindInternal), trace.WithAttributes(attribute.String(KeyCommand, opts.Path)))
	ctx = context.WithValue(ctx, rootKey{}, root)
	return ctx, func(code int) {
		root.SetAttributes(attribute.Int(KeyExitCode, code))
		if code != 0 {
			root.SetStatus(codes.Error, "")
			root.SetAttributes(attribute.String(KeyErrorType, codeString(code)))
		}
		root.End()
		wait := FlushTimeout
		if cfg.Timeout < wait {
			wait = cfg.Timeout
		}
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			w.say(fmt.Sprintf("spans not exported within %s: %v", wait, err))
		}
		// An export the deadline cut short reports its own failure from the
		// batcher's goroutine: the command has said its one line.
		w.say("")
	}
}

// warnOnce passes the first telemetry problem of a command to warn and
// drops the rest: a collector that is down or slow is one line on stderr,
// however many exports fail (a long `mcp` session) and whichever of the
// batcher and the exit's flush notices first. say("") closes it unsaid.
type warnOnce struct {
	mu   sync.Mutex
	done bool
	warn func(string)
}

func (w *warnOnce) say(s string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = true
	if s != "" && w.warn != nil {
		w.warn(s)
	}
}

// newProvider builds the SDK: resource, sampler (the SDK reads
// OTEL_TRACES_SAMPLER), batching and the exporter. Export failures go to
// warn.
func newProvider(ctx context.Context, cfg Config, version string, warn func(string)) *sdktrace.TracerProvider {
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { warn(err.Error()) }))
	if version == "" {
		version = "devel"
	}
	// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override these.
	res, err := resource.Merge(
		resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("readproof"), semconv.ServiceVersion(version)),
		envResource(ctx, warn),
	)
	if err != nil {
		res = resource.NewWithAttributes(semconv.SchemaURL, semconv.ServiceName("readproof"), semconv.ServiceVersion(version))
	}
	// Two batchers on one exporter: one for the spans of each document
	// (resolve, fetch), which a large run makes by the thousand, and one
	// for the rest, a few per command. When the collector is slower than
	// spans come, a full queue drops spans; it is then the per-document
	// queue that drops them, never the one holding the command span and
	// readproof.commit, which carry the manifest id and the Merkle root a
	// trace is joined on. The outcome's queue is flushed first at exit.
	exp := newExporter(cfg, 2)
	batch := []sdktrace.BatchSpanProcessorOption{sdktrace.WithBatchTimeout(time.Second), sdktrace.WithExportTimeout(cfg.Timeout)}
	return sdktrace.NewTracerProvider(
		sdktrace.WithResource(res),
		sdktrace.WithSpanProcessor(spanFilter{sdktrace.NewBatchSpanProcessor(exp, batch...), false}),
		sdktrace.WithSpanProcessor(spanFilter{sdktrace.NewBatchSpanProcessor(exp, batch...), true}),
	)
}

// spanFilter passes to its processor the spans of one kind: per-document
// spans (readproof.resolve, readproof.fetch) or all others.
type spanFilter struct {
	sdktrace.SpanProcessor
	perDocument bool
}

// OnEnd implements sdktrace.SpanProcessor.
func (f spanFilter) OnEnd(s sdktrace.ReadOnlySpan) {
	if n := s.Name(); (n == SpanResolve || n == SpanFetch) == f.perDocument {
		f.SpanProcessor.OnEnd(s)
	}
}

// envResource is the resource OTEL_SERVICE_NAME and
// OTEL_RESOURCE_ATTRIBUTES describe (empty when neither is set). A
// malformed item is left out, with one warning that quotes none (an item
// may hold anything); the rest of the resource is kept.
func envResource(ctx context.Context, warn func(string)) *resource.Resource {
	r, err := resource.New(ctx, resource.WithFromEnv())
	if err != nil {
		warn("OTEL_RESOURCE_ATTRIBUTES: an item is not key=value with a percent-encoded value; it is left out")
	}
	if r == nil {
		return resource.Empty()
	}
	return r
}
