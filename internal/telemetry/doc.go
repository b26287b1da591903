// Package telemetry owns readproof's OpenTelemetry traces: reading the
// standard OTEL_* environment, the W3C trace context that comes in
// (TRACEPARENT/TRACESTATE, the traceparent header of MCP over HTTP) and
// goes out (the manifest's trace id, TRACEPARENT for `readproof exec`),
// the spans and their attributes (docs/observability.md lists every one),
// and an OTLP/HTTP protobuf exporter.
//
// Telemetry is off unless the environment configures an exporter. Off, no
// SDK is built: Start returns a no-op span and costs a context lookup. The
// exporter encodes OTLP protobuf itself instead of linking the upstream
// otlptracehttp module, whose generated protobuf and gRPC packages add
// ~2 ms of package initialisation to every readproof start, configured or
// not (bench/otel.sh measures it).
//
// It imports nothing of the module, so every layer may call it: a hook is
// `ctx, span := telemetry.Start(ctx, telemetry.SpanX, attrs...)` and
// `telemetry.End(span, err)`. Attribute values are identities, counts,
// hashes and redacted sources only: never document bytes, header values,
// tokens or sentinels.
package telemetry
