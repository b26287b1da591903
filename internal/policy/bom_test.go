package policy

import (
	"errors"
	"testing"
)

// TestSyntaxErrorPositionAfterBOM: a file an editor saved with a UTF-8
// byte-order mark reports a syntax error at the line and column the same
// file without it does (the mark is not a character of the line: editors
// do not show it).
func TestSyntaxErrorPositionAfterBOM(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		text      string
		line, col int
	}{
		{"version = = 1\n", 1, 11},
		{"version = 1\n= 2\n", 2, 1},
		{"version = 1\r\n[[resource]]\r\nuri = \"readproof://d/x\"\r\nsource = { type = \"filesystem\", path = \"x.md\" \r\n", 4, 48},
	} {
		for _, bom := range []string{"", "\ufeff"} {
			_, err := Parse("p.toml", []byte(bom+c.text))
			var pe *Error
			if !errors.As(err, &pe) {
				t.Fatalf("%q: %v, want a syntax error", bom+c.text, err)
			}
			if pe.Line != c.line || pe.Column != c.col {
				t.Errorf("%q: error at %d:%d (%v), want %d:%d", bom+c.text, pe.Line, pe.Column, err, c.line, c.col)
			}
		}
	}
}
