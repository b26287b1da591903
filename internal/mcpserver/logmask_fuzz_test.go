package mcpserver

import (
	"strings"
	"testing"
)

// FuzzMaskTokens: what maskTokens returns holds no token-shaped run (the
// prefix and 8 hex digits), and a string without the prefix is unchanged.
func FuzzMaskTokens(f *testing.F) {
	f.Add("path=/x/rpmcp_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff")
	f.Add("rpmcp_rpmcp_0123456789")
	f.Add("rpmcp_0123456 rpmcp_")
	f.Fuzz(func(t *testing.T, s string) {
		got := maskTokens(s)
		if !strings.Contains(s, "rpmcp_") && got != s {
			t.Fatalf("maskTokens(%q) = %q, want it unchanged", s, got)
		}
		for rest := got; ; {
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
