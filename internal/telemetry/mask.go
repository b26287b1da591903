package telemetry

import "strings"

// TokenPrefix starts every bearer token of `readproof mcp --http`
// (mcpauth.TokenPrefix, which this package may not import: telemetry
// depends on no other package of the module; a test of mcpserver holds the
// two equal).
const TokenPrefix = "rpmcp_"

// MaskTokens is s with every token-shaped run (TokenPrefix, in any case,
// followed by 8 hex digits or more: a token, or the most of one a text
// could quote) written TokenPrefix + "[REDACTED]". A token in capitals is
// the same secret (its hex names the same bytes). The MCP server's log
// (--verbose) masks every line with it, and the OTLP exporter every string
// attribute: a client may put its token where readproof quotes what it
// sent (the URL path, a URI it reads).
func MaskTokens(s string) string {
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
		j := i + len(TokenPrefix)
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
	const p = TokenPrefix
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
