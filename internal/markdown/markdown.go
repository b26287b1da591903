// Package markdown writes GitHub-flavoured markdown for pull-request
// comments and CI job summaries: escaped inline text, tables, fenced
// blocks and collapsed sections.
//
// Every string that a document, a source or a store controls goes through
// [Text] (inline) or [Fenced] (verbatim blocks), so no document or path can
// add markup, links, HTML, mentions or a fence of its own to the page. The
// package is a leaf: it imports nothing of the module.
//
//	var b strings.Builder
//	markdown.Table(&b, []string{"document", "state"}, [][]string{{markdown.Text(uri), "up to date"}})
package markdown

import (
	"fmt"
	"io"
	"strings"
	"unicode"
)

// Text escapes s for inline markdown: ASCII punctuation that markdown or
// GitHub gives a meaning (emphasis, code, links, tables, mentions, math,
// the colon of an autolink's "://") is backslash-escaped, and so is a heading, list, quote or
// rule marker at the start of s; &, < and > become entities,
// line breaks and other control characters become spaces, and a bidi
// control (U+202E) its escape, so s renders as the same characters, in
// their order, on one line and nothing else.
func Text(s string) string {
	var b strings.Builder
	b.Grow(len(s) + len(s)/8)
	start := true // block markers (#, +, -, =, >) matter only first
	for i, r := range s {
		first := start
		if r != ' ' {
			start = false
		}
		switch {
		case first && r < 0x80 && strings.ContainsRune("#+-=>", r):
			if r == '>' {
				b.WriteString("&gt;")
			} else {
				b.WriteByte('\\')
				b.WriteRune(r)
			}
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r < 0x80 && strings.ContainsRune("\\`*_{}[]()!|~@$", r),
			r == ':' && strings.HasPrefix(s[i+1:], "//"): // no autolink
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == unicode.ReplacementChar || unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		case unicode.Is(unicode.Bidi_Control, r):
			writeBidi(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// writeBidi writes the bidi control r (U+202E and the like, which would
// show the rest of the line reversed or reordered on the page) as its
// escape, \u202e: visible, and inert in text, HTML and a code span.
func writeBidi(b *strings.Builder, r rune) {
	fmt.Fprintf(b, `\u%04x`, r)
}

// HTML escapes s for text inside an HTML element (a <summary>): &, <, >
// and quotes become entities, control characters spaces, and characters
// markdown would read inside the element are left inert by the entities.
func HTML(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r < 0x80 && strings.ContainsRune("\\`*_[]|~@#", r):
			fmt.Fprintf(&b, "&#%d;", r)
		case unicode.IsControl(r) || r == '\u2028' || r == '\u2029':
			b.WriteByte(' ')
		case unicode.Is(unicode.Bidi_Control, r):
			writeBidi(&b, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Code returns s as an inline code span, for identifiers (object ids,
// hashes): the delimiters are longer than any run of backticks in s,
// line breaks become spaces and bidi controls their escapes.
func Code(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	if strings.IndexFunc(s, func(r rune) bool { return unicode.Is(unicode.Bidi_Control, r) }) >= 0 {
		var b strings.Builder
		for _, r := range s {
			if unicode.Is(unicode.Bidi_Control, r) {
				writeBidi(&b, r)
			} else {
				b.WriteRune(r)
			}
		}
		s = b.String()
	}
	if s == "" {
		return ""
	}
	// inside a table cell a pipe ends the cell even in a code span
	s = strings.ReplaceAll(s, "|", "\\|")
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		return fence + " " + s + " " + fence
	}
	return fence + s + fence
}

func longestRun(s string, c rune) int {
	best, n := 0, 0
	for _, r := range s {
		if r == c {
			n++
			if n > best {
				best = n
			}
		} else {
			n = 0
		}
	}
	return best
}

// Table writes a table; cells must already be markdown (escaped with Text
// or Code). An empty cell is written as a space.
func Table(w io.Writer, header []string, rows [][]string) {
	fmt.Fprint(w, TableHead(header))
	for _, r := range rows {
		fmt.Fprint(w, Row(r))
	}
}

// TableHead returns the first two lines of a table: header (markdown
// cells) and the separator line. With [Row] it builds a table a row at a
// time, so that a writer with a size limit can leave rows out whole.
func TableHead(header []string) string {
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = "---"
	}
	return Row(header) + Row(sep)
}

// Row returns one line of a table, newline included; cells must already be
// markdown. An empty cell is written as a space.
func Row(cells []string) string {
	var b strings.Builder
	b.WriteString("|")
	for _, c := range cells {
		if c == "" {
			c = " "
		}
		b.WriteString(" ")
		b.WriteString(c)
		b.WriteString(" |")
	}
	b.WriteString("\n")
	return b.String()
}

// Budget is what is left of a size limit on a page, counted in bytes of
// UTF-8: a page within n bytes holds at most n characters however a host
// counts them (code points, UTF-16 units or bytes). A page is built from
// whole parts (a table row, a fenced block inside its <details>), each
// taken only if it fits, so the page stays valid markdown.
type Budget struct {
	left int
}

// NewBudget returns a budget of n bytes (none when n < 0).
func NewBudget(n int) *Budget {
	return &Budget{left: max(n, 0)}
}

// Take spends len(s) of the budget and reports true if s fits in what is
// left; otherwise it spends nothing and reports false.
func (b *Budget) Take(s string) bool {
	if len(s) > b.left {
		return false
	}
	b.left -= len(s)
	return true
}

// Left is what is left of the budget, in bytes.
func (b *Budget) Left() int { return b.left }

// Fenced writes body verbatim in a fenced code block tagged lang. The fence
// is longer than any run of backticks at the start of a line of body, so
// the body cannot close it; a body without a final newline gets one. A
// line is what CommonMark calls one: a carriage return alone ends a line
// too, so "x\r```" holds a line that would otherwise close the block.
func Fenced(w io.Writer, lang, body string) {
	n := 3
	for l := range strings.FieldsFuncSeq(body, func(r rune) bool { return r == '\n' || r == '\r' }) {
		t := strings.TrimLeft(l, " \t") // more indentation than a fence may have only lengthens it
		if k := leadingRun(t, '`'); k >= n {
			n = k + 1
		}
	}
	fence := strings.Repeat("`", n)
	fmt.Fprintf(w, "%s%s\n", fence, lang)
	fmt.Fprint(w, body)
	if body != "" && !strings.HasSuffix(body, "\n") {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, fence)
}

func leadingRun(s string, c byte) int {
	n := 0
	for n < len(s) && s[n] == c {
		n++
	}
	return n
}

// CollapseLines is the length (in lines) above which Block collapses its
// body into a <details> element.
const CollapseLines = 20

// Block writes body as a fenced block tagged lang, inside a collapsed
// <details> element whose summary is summary (plain text, escaped here)
// when body has more than CollapseLines lines.
func Block(w io.Writer, summary, lang, body string) {
	lines := strings.Count(body, "\n")
	if !strings.HasSuffix(body, "\n") && body != "" {
		lines++
	}
	if lines <= CollapseLines {
		Fenced(w, lang, body)
		return
	}
	fmt.Fprintf(w, "<details><summary>%s (%d lines)</summary>\n\n", HTML(summary), lines)
	Fenced(w, lang, body)
	fmt.Fprint(w, "\n</details>\n")
}
