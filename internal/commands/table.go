package commands

import (
	"io"
	"strings"
	"text/tabwriter"
	"time"
	"unicode/utf8"
)

// writeTable writes rows as text/tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
// writes them when each row is its cells joined by tabs and ended by a
// newline, every row with as many cells: each cell but the last padded
// with spaces to the widest cell of its column (in runes) plus two. It
// measures and writes each cell once, where tabwriter copies the text
// into cells and lines first, which showed in the profile of a manifest
// of thousands of entries. Rows of unequal length, or cells with bytes
// tabwriter gives a meaning to (tab, newline, vertical tab, form feed,
// its escape byte 0xff), go through tabwriter itself.
func writeTable(w io.Writer, rows [][]string) error {
	if len(rows) == 0 {
		return nil
	}
	n := len(rows[0])
	widths := make([]int, n)
	for _, r := range rows {
		if len(r) != n {
			return writeTabwriter(w, rows)
		}
		for j, c := range r {
			if tabwriterCell(c) {
				return writeTabwriter(w, rows)
			}
			if j < n-1 {
				widths[j] = max(widths[j], utf8.RuneCountInString(c))
			}
		}
	}
	var b strings.Builder
	const pad = 2
	for _, r := range rows {
		b.Reset()
		for j, c := range r {
			b.WriteString(c)
			if j < n-1 {
				for k := utf8.RuneCountInString(c); k < widths[j]+pad; k++ {
					b.WriteByte(' ')
				}
			}
		}
		b.WriteByte('\n')
		if _, err := io.WriteString(w, b.String()); err != nil {
			return err
		}
	}
	return nil
}

// tabwriterCell reports whether c has a byte tabwriter gives a meaning to
// (writeTable then leaves the table to tabwriter).
func tabwriterCell(c string) bool {
	return strings.ContainsAny(c, "\t\n\v\f") || strings.IndexByte(c, 0xff) >= 0
}

// writeTabwriter is writeTable through text/tabwriter.
func writeTabwriter(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		if _, err := io.WriteString(tw, strings.Join(r, "\t")+"\n"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// textTime is how text tables and reports print a time: RFC 3339 in UTC, to
// the second, as `2026-12-05T04:47:28Z`. --json keeps the time's full
// precision; receipts list prints milliseconds (receiptTableTime).
func textTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
