package commands

import (
	"fmt"
	"strings"
	"testing"
)

// diffOfLines is a unified diff of n changed lines, as manifest.Unified
// writes it; hostile, when set, is put in the middle of one line.
func diffOfLines(n int, hostile string) string {
	var b strings.Builder
	b.WriteString("--- a/readproof://demo/doc\n+++ b/readproof://demo/doc\n")
	fmt.Fprintf(&b, "@@ -1,%d +1,%d @@\n", n, n)
	for i := 0; i < n; i++ {
		sign := " -+"[i%3]
		if i == n/2 {
			fmt.Fprintf(&b, "%c line %d%s of the document\n", sign, i, hostile)
			continue
		}
		fmt.Fprintf(&b, "%c line %d of the document, with\ttabs and ASCII only\n", sign, i)
	}
	b.WriteString("\\ No newline at end of file\n")
	return b.String()
}

// TestReadableDiffKeepsAPrintableDiff (session 23): a diff no line of which
// needs quoting (nearly every one) was rebuilt line by line into a copy of
// itself. It is now given back as it is, with no allocation; a diff with
// one hostile line still has that line, and only it, quoted.
func TestReadableDiffKeepsAPrintableDiff(t *testing.T) {
	clean := diffOfLines(1000, "")
	if got := readableDiff(clean); got != clean {
		t.Fatalf("a printable diff changed:\n%s", got)
	}
	if n := testing.AllocsPerRun(10, func() { _ = readableDiff(clean) }); n != 0 {
		t.Errorf("readableDiff of a printable 1,000-line diff: %v allocations, want 0 (it rebuilds the text)", n)
	}
	hostile := diffOfLines(1000, "\x1b[2K")
	got := readableDiff(hostile)
	want := strings.Replace(hostile, "+ line 500\x1b[2K of the document\n", `+" line 500\x1b[2K of the document"`+"\n", 1)
	if want == hostile || got != want {
		t.Errorf("a diff with one hostile line: got\n%.300q\nwant only that line quoted", got)
	}
	for _, in := range []string{"", "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y"} {
		wantEnd := in
		if in != "" {
			wantEnd += "\n"
		}
		if got := readableDiff(in); got != wantEnd {
			t.Errorf("readableDiff(%q) = %q, want %q", in, got, wantEnd)
		}
	}
}

func BenchmarkReadableDiff1000(b *testing.B) {
	for _, c := range []struct{ name, hostile string }{{"printable", ""}, {"one-hostile-line", "\x1b[2K"}} {
		u := diffOfLines(1000, c.hostile)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(u)))
			for i := 0; i < b.N; i++ {
				_ = readableDiff(u)
			}
		})
	}
}
