package markdown

import (
	"strings"
	"testing"
)

// inert reports why escaped inline text could still be markup: a raw
// HTML bracket, a line break, or a markdown character not escaped.
func inert(out string) string {
	if strings.ContainsAny(out, "<>\n\r") {
		return "raw HTML bracket or line break"
	}
	for i := 0; i < len(out); i++ {
		c := out[i]
		if c == '\\' {
			i++ // the escaped character
			continue
		}
		if strings.IndexByte("`*_[]|~@$", c) >= 0 {
			return "unescaped " + string(c)
		}
	}
	return ""
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain words 12:00":         "plain words 12:00",
		"# heading":                 "\\# heading",
		"a|b":                       "a\\|b",
		"<b>&":                      "&lt;b&gt;&amp;",
		"@team https://x.example":   "\\@team https\\://x.example",
		"line\nbreak":               "line break",
		"**x** `y` [l](u) ~~s~~ $m": "\\*\\*x\\*\\* \\`y\\` \\[l\\]\\(u\\) \\~\\~s\\~\\~ \\$m",
		// a bidi control would turn the rest of the line around on the
		// page ("a‮gnp.md" shows as "adm.png"): written as its escape
		"a\u202egnp.md \u2066x\u2069": "a\\u202egnp.md \\u2066x\\u2069",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestFencedCannotBeClosedByTheBody(t *testing.T) {
	var b strings.Builder
	Fenced(&b, "diff", "a\n  ````\nb")
	want := "`````diff\na\n  ````\nb\n`````\n"
	if b.String() != want {
		t.Errorf("Fenced = %q, want %q", b.String(), want)
	}
}

// A lone carriage return ends a line in CommonMark (and in GitHub's
// renderer), so a document line "x\r```" holds a line that is a fence.
func TestFencedCountsCarriageReturnLines(t *testing.T) {
	for body, want := range map[string]string{
		"+a\r```\r+<img src=x>\n":   "````diff\n+a\r```\r+<img src=x>\n````\n",
		"+a\r\n  ````\r\n":          "`````diff\n+a\r\n  ````\r\n`````\n",
		" ok\r\n``` not at start\n": "````diff\n ok\r\n``` not at start\n````\n",
	} {
		var b strings.Builder
		Fenced(&b, "diff", body)
		if b.String() != want {
			t.Errorf("Fenced(%q) = %q, want %q", body, b.String(), want)
		}
	}
}

// markdownLines splits s at every CommonMark line ending: \r\n, \r, \n.
func markdownLines(s string) []string {
	return strings.Split(strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n"), "\n")
}

func TestCode(t *testing.T) {
	for in, want := range map[string]string{
		"a\u202eb": "`a\\u202eb`",
		"abc":      "`abc`",
		"a`b":      "``a`b``",
		"`a":       "`` `a ``",
		"a|b\n":    "`a\\|b `",
	} {
		if got := Code(in); got != want {
			t.Errorf("Code(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBlockCollapsesLongBodies(t *testing.T) {
	var b strings.Builder
	Block(&b, "short", "", "x\n")
	if strings.Contains(b.String(), "<details>") {
		t.Errorf("a one-line body was collapsed: %q", b.String())
	}
	b.Reset()
	Block(&b, "<long> & @x", "", strings.Repeat("x\n", CollapseLines+1))
	if !strings.HasPrefix(b.String(), "<details><summary>&lt;long&gt; &amp; &#64;x (21 lines)</summary>\n\n```\n") {
		t.Errorf("a long body was not collapsed under an escaped summary: %q", b.String()[:60])
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "# h", "<script>", "a|b", "``", "@x", "\\", "x\u2028y", "https://e", "a\r```\rb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if why := inert(Text(s)); why != "" {
			t.Fatalf("Text(%q) = %q: %s", s, Text(s), why)
		}
		out := HTML(s)
		if strings.ContainsAny(out, "<>\"'\n") {
			t.Fatalf("HTML(%q) = %q leaves markup", s, out)
		}
		var b strings.Builder
		Fenced(&b, "", s)
		lines := markdownLines(strings.TrimSuffix(b.String(), "\n"))
		fence := lines[0]
		for _, l := range lines[1 : len(lines)-1] {
			if t := strings.TrimLeft(l, " "); strings.HasPrefix(t, fence) {
				panic("the body closes the fence: " + l)
			}
		}
	})
}

func TestRowAndBudget(t *testing.T) {
	var b strings.Builder
	Table(&b, []string{"a", "b"}, [][]string{{"1", ""}})
	if want := "| a | b |\n| --- | --- |\n| 1 |   |\n"; b.String() != want || TableHead([]string{"a", "b"})+Row([]string{"1", ""}) != want {
		t.Errorf("Table = %q, want %q", b.String(), want)
	}
	bud := NewBudget(10)
	if !bud.Take("12345") || bud.Take("123456") || !bud.Take("12345") || bud.Left() != 0 || bud.Take("x") {
		t.Errorf("a budget of 10 took more or less than 10 bytes: %d left", bud.Left())
	}
	if NewBudget(-5).Take("x") {
		t.Error("a negative budget took a byte")
	}
}
