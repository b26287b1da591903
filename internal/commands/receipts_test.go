package commands

import (
	"bytes"
	"slices"
	"strings"
	"testing"
)

func TestSplitNULArgs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", []string{}},
		{"\x00", []string{""}},
		{"a", []string{"a"}},
		{"a\x00", []string{"a"}},
		{"a\x00b", []string{"a", "b"}},
		{"a\x00b\x00", []string{"a", "b"}},
		{"a\x00\x00", []string{"a", ""}},
		{"\x00\x00", []string{"", ""}},
		{"sh\x00-c\x00echo 'x y'\n\x00", []string{"sh", "-c", "echo 'x y'\n"}},
	} {
		if got := splitNULArgs([]byte(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("splitNULArgs(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// FuzzSplitNULArgs checks that the --args file format is read back exactly:
// every argument list written NUL-terminated (as /proc/PID/cmdline and
// find -print0 write it) comes back unchanged, and any input is its
// arguments joined by NULs, one final NUL optional.
func FuzzSplitNULArgs(f *testing.F) {
	for _, s := range []string{"", "\x00", "a\x00b", "a\x00b\x00", "\x00\x00\x00", "make\x00-C\x00src\x00"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		args := splitNULArgs(b)
		joined := []byte(strings.Join(args, "\x00"))
		if len(b) > 0 && !bytes.Equal(joined, bytes.TrimSuffix(b, []byte{0})) {
			t.Fatalf("splitNULArgs(%q) = %q: joined %q", b, args, joined)
		}
		for _, a := range args {
			if strings.IndexByte(a, 0) >= 0 {
				t.Fatalf("argument %q holds a NUL", a)
			}
		}
		var written []byte
		for _, a := range args {
			written = append(append(written, a...), 0)
		}
		if back := splitNULArgs(written); !slices.Equal(back, args) {
			t.Fatalf("round trip of %q: %q", args, back)
		}
	})
}

func TestReceiptText(t *testing.T) {
	for in, want := range map[string]string{
		"exec":          "exec",
		"my tool":       `"my tool"`,
		"a\tb":          `"a\tb"`,
		"q\"":           `"q\""`,
		"line\u2028x":   `"line\u2028x"`,
		"naïve-ünïcode": "naïve-ünïcode",
		// the validation of a receipt (receipts.validText) lets format
		// characters through: a bidi override turns a tool name around
		"run\u202ehs.exe": `"run\u202ehs.exe"`,
		"a\u200bb":        `"a\u200bb"`,
	} {
		if got := receiptText(in); got != want {
			t.Errorf("receiptText(%q) = %s, want %s", in, got, want)
		}
	}
}
