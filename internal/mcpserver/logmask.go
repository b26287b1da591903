package mcpserver

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/readproof/readproof/internal/telemetry"
)

// tokenMask is the server's log handler: every token-shaped string in a
// message or an attribute is logged as rpmcp_[REDACTED]. The server logs
// no header, but a client may put its token where the log quotes what it
// sent: in the URL path (the endpoint answers every path, and --verbose
// logs the path of each request) or in an argument a tool error quotes.
// Before session 28 both went to the log whole.
type tokenMask struct{ slog.Handler }

// maskTokens is s with every token-shaped run masked
// (telemetry.MaskTokens, which the OTLP exporter shares: one rule for
// what the server logs and what it exports).
func maskTokens(s string) string { return telemetry.MaskTokens(s) }

func maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, maskTokens(v.String()))
	case slog.KindGroup:
		as := v.Group()
		out := make([]any, len(as))
		for i, g := range as {
			out[i] = maskAttr(g)
		}
		return slog.Group(a.Key, out...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, maskTokens(x.Error()))
		case fmt.Stringer:
			return slog.String(a.Key, maskTokens(x.String()))
		case []byte:
			return slog.String(a.Key, maskTokens(string(x)))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}

func (h tokenMask) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, maskTokens(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(maskAttr(a))
		return true
	})
	return h.Handler.Handle(ctx, out)
}

func (h tokenMask) WithAttrs(as []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(as))
	for i, a := range as {
		masked[i] = maskAttr(a)
	}
	return tokenMask{h.Handler.WithAttrs(masked)}
}

func (h tokenMask) WithGroup(name string) slog.Handler { return tokenMask{h.Handler.WithGroup(name)} }
