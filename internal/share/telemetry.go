package share

// The push and pull spans (docs/observability.md).

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/telemetry"
)

// Pull is pull (above) in a readproof.pull span.
func Pull(ctx context.Context, s *store.Store, remote string, opts Options) (*PullResult, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanPull, remoteAttr(remote))
	res, err := pull(ctx, s, remote, opts)
	if res != nil && span.IsRecording() {
		span.SetAttributes(attribute.Int(telemetry.KeyRuns, len(res.NewRuns)), attribute.Bool(telemetry.KeyUpToDate, res.UpToDate))
	}
	telemetry.End(span, err)
	return res, err
}

// Push is push (above) in a readproof.push span.
func Push(ctx context.Context, s *store.Store, remote string, opts Options) (*PushResult, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanPush, remoteAttr(remote))
	res, err := push(ctx, s, remote, opts)
	if res != nil && span.IsRecording() {
		span.SetAttributes(attribute.Int(telemetry.KeyRuns, len(res.Runs)), attribute.Int(telemetry.KeyRefs, res.Refs),
			attribute.Bool(telemetry.KeyUpToDate, res.UpToDate))
	}
	telemetry.End(span, err)
	return res, err
}

// remoteAttr names the remote when it is a configured remote's name; a URL
// given in its place is not recorded (it may carry credentials).
func remoteAttr(remote string) attribute.KeyValue {
	for _, c := range remote {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return attribute.String(telemetry.KeyRemote, "(url)")
		}
	}
	return attribute.String(telemetry.KeyRemote, remote)
}
