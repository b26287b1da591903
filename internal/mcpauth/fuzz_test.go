package mcpauth

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// FuzzVerify: any presented string either verifies as the one token issued
// (and then it is exactly that token) or fails with one of the documented
// errors, without the string in the message; the parser accepts exactly
// the prefix and 64 lower-case hex digits.
func FuzzVerify(f *testing.F) {
	file := Empty()
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	issued, err := file.Add("fuzz", ScopeRead, time.Hour, now, nil)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range []string{issued, "", TokenPrefix, TokenPrefix + strings.Repeat("0", 64), TokenPrefix + strings.Repeat("F", 64),
		issued[:len(issued)-1], issued + "\n", "Bearer " + issued, "rpmcp-" + issued[6:]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		perr := ParseToken(s)
		wellFormed := len(s) == TokenLen && strings.HasPrefix(s, TokenPrefix) && strings.Trim(s[len(TokenPrefix):], "0123456789abcdef") == ""
		if (perr == nil) != wellFormed {
			t.Fatalf("ParseToken(%q) = %v, well-formed %v", s, perr, wellFormed)
		}
		c, err := file.Verify(s, now)
		if err == nil {
			if s != issued || c.Name != "fuzz" {
				t.Fatalf("Verify accepted %q as %+v", s, c)
			}
			return
		}
		if s == issued {
			t.Fatalf("issued token refused: %v", err)
		}
		if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknown) {
			t.Fatalf("Verify(%q): undocumented error %v", s, err)
		}
		if len(s) > 8 && strings.Contains(err.Error(), s) {
			t.Fatalf("error quotes the presented string: %v", err)
		}
	})
}

// FuzzDecode: a token file either decodes into one that re-encodes and
// decodes to the same tokens, or is refused with ErrFile.
func FuzzDecode(f *testing.F) {
	seed := Empty()
	_, _ = seed.Add("a", ScopeWrite, time.Hour, time.Unix(0, 0), nil)
	_ = seed.Revoke("a", time.Unix(10, 0))
	f.Add(seed.Encode())
	f.Add([]byte(`{"format":"` + Format + `","tokens":[]}`))
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		g, err := Decode(data)
		if err != nil {
			if !errors.Is(err, ErrFile) {
				t.Fatalf("undocumented error %v", err)
			}
			return
		}
		h, err := Decode(g.Encode())
		if err != nil {
			t.Fatalf("re-encoded file refused: %v", err)
		}
		if len(h.Tokens) != len(g.Tokens) {
			t.Fatalf("%d tokens, then %d", len(g.Tokens), len(h.Tokens))
		}
	})
}
