package commands

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode"
)

// TestPrintJSONEscapesControls: --json output carries what a source or a
// remote chose (an ETag, a ref name) as \u escapes when a terminal would
// act on it, and decodes to the same value.
func TestPrintJSONEscapesControls(t *testing.T) {
	in := map[string]string{
		"etag":  "\"abc\u202ecba\t\"",
		"ctl":   "\x1b]0;title\a\x1b[2K\rX\x7f\u0085",
		"wide":  "tag\U000E0041\u2028",
		"plain": "héllo – ✓ 日本",
	}
	var b bytes.Buffer
	if err := printJSON(&b, in); err != nil {
		t.Fatal(err)
	}
	for _, r := range b.String() {
		if !unicode.IsPrint(r) && r != '\n' && r != ' ' {
			t.Fatalf("output carries %U:\n%q", r, b.String())
		}
	}
	if !strings.Contains(b.String(), `\u202e`) || !strings.Contains(b.String(), `\udb40\udc41`) || !strings.Contains(b.String(), "héllo – ✓ 日本") {
		t.Fatalf("output:\n%s", b.String())
	}
	var out map[string]string
	if err := json.Unmarshal(b.Bytes(), &out); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b.String())
	}
	for k, v := range in {
		if out[k] != v {
			t.Errorf("%s: decoded %q, want %q", k, out[k], v)
		}
	}
}
