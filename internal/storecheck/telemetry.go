package storecheck

// The verify span (docs/observability.md).

import (
	"context"

	"go.opentelemetry.io/otel/attribute"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/telemetry"
)

// Check is check (above) in a readproof.verify span.
func Check(ctx context.Context, s *store.Store, opts Options) (*Report, error) {
	ctx, span := telemetry.Start(ctx, telemetry.SpanVerify)
	rep, err := check(ctx, s, opts)
	if rep != nil && span.IsRecording() {
		span.SetAttributes(attribute.String(telemetry.KeyVerifyMode, rep.Mode), attribute.Int(telemetry.KeyProblems, len(rep.Problems)),
			attribute.Bool(telemetry.KeyOK, rep.OK()))
	}
	telemetry.End(span, err)
	return rep, err
}
