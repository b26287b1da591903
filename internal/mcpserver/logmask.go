package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/readproof/readproof/internal/mcpauth"
)

// tokenMask is the server's log handler: every token-shaped string in a
// message or an attribute is logged as rpmcp_[REDACTED]. The server logs
// no header, but a client may put its token where the log quotes what it
// sent: in the URL path (the endpoint answers every path, and --verbose
// logs the path of each request) or in an argument a tool error quotes.
// Before session 28 both went to the log whole.
type tokenMask struct{ slog.Handler }

// maskTokens is s with every token-shaped run (the token prefix, in any
// case, followed by 8 hex digits or more: a token, or the most of one a
// log could quote) masked. A token in capitals is the same secret (its hex
// names the same bytes); before the re-read of session 28 it was logged
// whole.
func maskTokens(s string) string {
	if indexPrefix(s) < 0 {
		return s
	}
	var b strings.Builder
	for {
		i := indexPrefix(s)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		j := i + len(mcpauth.TokenPrefix)
		k := j
		for k < len(s) && isHex(s[k]) {
			k++
		}
		b.WriteString(s[:j])
		if k-j >= 8 {
			b.WriteString("[REDACTED]")
		} else {
			b.WriteString(s[j:k])
		}
		s = s[k:]
	}
}

// indexPrefix is the index of the first token prefix in s, in any case,
// or -1: each '_' (found fast) is checked for the prefix's other letters
// before it.
func indexPrefix(s string) int {
	const p = mcpauth.TokenPrefix
	last := len(p) - 1
	for off := 0; ; {
		k := strings.IndexByte(s[off:], p[last])
		if k < 0 {
			return -1
		}
		k += off
		if k >= last && s[k-1]|0x20 == p[last-1] && strings.EqualFold(s[k-last:k+1], p) {
			return k - last
		}
		off = k + 1
	}
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

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
