package commands

import (
	"bytes"
	"strings"
	"testing"
)

// writeTable hands every table with a byte tabwriter gives a meaning to,
// in an ASCII cell or not, to tabwriter, and pads cells of any width, with
// invalid UTF-8 and runes of several bytes, as tabwriter does.
func TestWriteTableSpecialCells(t *testing.T) {
	wide := strings.Repeat("w", 70)
	for _, special := range []string{"\t", "\n", "\v", "\f", "\xff", "é\t", "é\n", "é\v", "é\f", "\x80", "a\xc3", "\xe2\x98\x83", ""} {
		for _, pos := range []int{0, 1, 2} {
			rows := [][]string{{"POS", "URI", "X"}, {"0", wide, "fetch"}, {"10", "readproof://a/b", "use_tag"}}
			rows[1][pos] += special
			var got, want bytes.Buffer
			if err := writeTable(&got, rows); err != nil {
				t.Fatal(err)
			}
			if err := writeTabwriter(&want, rows); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("rows %q:\nwriteTable:\n%s\ntabwriter:\n%s", rows, got.String(), want.String())
			}
		}
	}
}
