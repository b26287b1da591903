package store

// Spans of the store's operations (docs/observability.md): resolve, fetch,
// mount and commit. Attribute values are identities, decisions, counts,
// hashes and the redacted source; never document bytes.

import (
	"context"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/telemetry"
	"github.com/readproof/readproof/manifest"
)

// sourceAttrs names a resource's source: its type and its redacted
// description.
func sourceAttrs(res *policy.Resource) []attribute.KeyValue {
	return []attribute.KeyValue{
		attribute.String(telemetry.KeySourceType, res.Source.Type),
		attribute.String(telemetry.KeySource, res.Source.Redacted().Describe()),
	}
}

// endResolve ends a resolve span with what was delivered and why.
func (s *Store) endResolve(span trace.Span, ref string, d *Delivery, err error) {
	if span.IsRecording() {
		if u, perr := identity.ParseURI(ref); perr == nil {
			tag := u.Tag
			u.Tag = ""
			// gen_ai.data_source.id too: the GenAI key Readproof v0.3.2
			// put on its resolve span, which users' queries name.
			span.SetAttributes(attribute.String(telemetry.KeyURI, u.String()), attribute.String(telemetry.KeyGenAIDataSource, u.String()))
			if tag != "" {
				span.SetAttributes(attribute.String(telemetry.KeyTag, tag))
			}
			if pol, err := s.Policy(); err == nil {
				if res, ok := pol.Lookup(u); ok {
					span.SetAttributes(sourceAttrs(res)...)
				}
			}
		}
		if d != nil {
			span.SetAttributes(
				attribute.String(telemetry.KeyDecision, d.Entry.Decision),
				attribute.Int64(telemetry.KeyBytes, d.Entry.Bytes),
				attribute.String(telemetry.KeySnapshot, d.Entry.Snapshot))
		}
	}
	telemetry.End(span, err)
}

func startFetch(ctx context.Context, res *policy.Resource) (context.Context, trace.Span) {
	if !telemetry.Enabled(ctx) {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return telemetry.StartKind(ctx, telemetry.SpanFetch, trace.SpanKindClient, sourceAttrs(res)...)
}

// endFetch ends a fetch span with the size read (0 and not_modified when
// the source answered "not modified").
func endFetch(span trace.Span, r adapters.Result, err error) {
	if err == nil && span.IsRecording() {
		span.SetAttributes(attribute.Bool(telemetry.KeyNotModified, r.NotModified), attribute.Int(telemetry.KeyBytes, len(r.Content)))
	}
	telemetry.End(span, err)
}

func startMount(ctx context.Context, runID string) (context.Context, trace.Span) {
	if !telemetry.Enabled(ctx) {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return telemetry.Start(ctx, telemetry.SpanMount, attribute.String(telemetry.KeyRunID, runID))
}

func endMount(span trace.Span, d *Delivery, err error) {
	if d != nil && span.IsRecording() {
		span.SetAttributes(attribute.String(telemetry.KeyURI, d.Entry.URI), attribute.Int(telemetry.KeyPosition, d.Position),
			attribute.Int64(telemetry.KeyBytes, d.Entry.Bytes))
	}
	telemetry.End(span, err)
}

func startCommit(ctx context.Context, runID string) (context.Context, trace.Span) {
	if !telemetry.Enabled(ctx) {
		return ctx, trace.SpanFromContext(context.Background())
	}
	return telemetry.Start(ctx, telemetry.SpanCommit, attribute.String(telemetry.KeyRunID, runID))
}

// endCommit ends a commit span with the manifest id, its entry count and
// the evidence Merkle root over its entries, and sets them on the command's
// root span too.
func endCommit(ctx context.Context, span trace.Span, m *manifest.Manifest, err error) {
	if err == nil && m != nil && m.ID != "" && span.IsRecording() {
		attrs := append(telemetry.Committed(m.ID, len(m.Entries), merkleRoot(m)), attribute.String(telemetry.KeyRunID, m.RunID))
		span.SetAttributes(attrs...)
		telemetry.Annotate(ctx, attrs...)
	}
	telemetry.End(span, err)
}

// merkleRoot is the evidence Merkle root over m's entries, as
// `evidence export` writes it (hex).
func merkleRoot(m *manifest.Manifest) string {
	leaves := make([][32]byte, len(m.Entries))
	for i, e := range m.Entries {
		leaves[i] = evidence.Leaf(uint32(e.Position), e.URI, e.ContentHash)
	}
	root := evidence.Root(leaves)
	return hex.EncodeToString(root[:])
}
