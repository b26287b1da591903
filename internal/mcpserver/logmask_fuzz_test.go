package mcpserver

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/telemetry"
)

// FuzzMaskTokens: what maskTokens returns holds no token-shaped run (the
// prefix, in any case, and 8 hex digits), and a string without the prefix
// is unchanged.
func FuzzMaskTokens(f *testing.F) {
	f.Add("path=/x/rpmcp_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	f.Add("rpmcp_rpmcp_0123456789")
	f.Add("rpmcp_0123456 rpmcp_")
	f.Add("uri=readproof://demo/RPMCP_00112233445566778899AABBCCDDEEFF00112233445566778899AABBCCDDEEFF")
	f.Add("Rpmcp_0123456789 _rPmCp_abcdef0123")
	f.Fuzz(func(t *testing.T, s string) {
		got := maskTokens(s)
		if !strings.Contains(asciiLower(s), "rpmcp_") && got != s {
			t.Fatalf("maskTokens(%q) = %q, want it unchanged", s, got)
		}
		for rest := asciiLower(got); ; {
			i := strings.Index(rest, "rpmcp_")
			if i < 0 {
				break
			}
			rest = rest[i+len("rpmcp_"):]
			n := 0
			for n < len(rest) && isHex(rest[n]) {
				n++
			}
			if n >= 8 {
				t.Fatalf("maskTokens(%q) = %q: a token-shaped run is left", s, got)
			}
		}
	})
}

// asciiLower is s with its ASCII capitals in lower case, byte for byte
// (strings.ToLower may change a string's length).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func isHex(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// TestTokenPrefixShared: the prefix telemetry masks (it may import no
// other package of the module) is the prefix of the tokens mcpauth issues.
func TestTokenPrefixShared(t *testing.T) {
	if telemetry.TokenPrefix != mcpauth.TokenPrefix {
		t.Fatalf("telemetry masks %q, tokens start %q", telemetry.TokenPrefix, mcpauth.TokenPrefix)
	}
}
