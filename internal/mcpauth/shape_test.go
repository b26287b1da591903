package mcpauth

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestVerifierJunkTouchesNoFile: a string not shaped as a token is refused
// with ErrMalformed before the token file is looked at, so a flood of junk
// costs no file-system access: with the file gone, junk is still refused
// as malformed, while a well-shaped token is answered by the file's state
// (it does not exist). Before session 30 every string stat'ed the file
// first, and was hashed.
func TestVerifierJunkTouchesNoFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp-tokens.json")
	var tok string
	if err := Update(path, nil, func(f *File) error {
		var err error
		tok, err = f.Add("ci", ScopeRead, 0, time.Now(), nil)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	v, err := NewVerifier(path, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	hexes := tok[len(TokenPrefix):]
	for _, junk := range []string{"", "good", tok[:TokenLen-1], tok + "0", TokenPrefix + strings.ToUpper(hexes),
		"rpmcp-" + hexes, TokenPrefix + "z" + hexes[1:], strings.Repeat("x", 1<<16)} {
		_, err := v.Verify(junk)
		if !errors.Is(err, ErrMalformed) || errors.Is(err, fs.ErrNotExist) {
			t.Errorf("junk of %d bytes with the token file gone: %v, want ErrMalformed alone", len(junk), err)
		}
	}
	if _, err := v.Verify(tok); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a well-shaped token with the token file gone: %v, want the file's absence", err)
	}
}

// BenchmarkVerifierJunk is what a string not shaped as a token costs the
// verifier of a token file of 100 entries: its shape read, nothing more
// (before session 30: a stat of the file and a hash).
func BenchmarkVerifierJunk(b *testing.B) {
	path := filepath.Join(b.TempDir(), "mcp-tokens.json")
	if err := Update(path, nil, func(f *File) error {
		for i := range 100 {
			if _, err := f.Add("t"+strings.Repeat("0", 3-len(itoa(i)))+itoa(i), ScopeRead, 0, time.Now(), nil); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		b.Fatal(err)
	}
	v, err := NewVerifier(path, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify("junk-token"); !errors.Is(err, ErrMalformed) {
			b.Fatal(err)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }
