package commands

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestWriteTableMatchesTabwriter: writeTable writes the bytes tabwriter
// writes, for tables of ASCII, multi-byte runes, empty cells and one
// column, and for the rows it hands to tabwriter.
func TestWriteTableMatchesTabwriter(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	words := []string{"", "a", "readproof://bench/docs/d0001", "0123456789ab", "sha256:38c530cb1ff5", "fetch", "é", "naïve☃", "-", "use_current"}
	cell := func() string {
		var b strings.Builder
		for range r.IntN(3) {
			b.WriteString(words[r.IntN(len(words))])
		}
		return b.String()
	}
	for round := range 300 {
		cols := 1 + r.IntN(6)
		rows := make([][]string, r.IntN(20))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				rows[i][j] = cell()
			}
		}
		switch round % 10 {
		case 1:
			if len(rows) > 1 {
				rows[1] = rows[1][:len(rows[1])-1] // unequal rows
			}
		case 2:
			if len(rows) > 0 {
				rows[0][0] += "\xff" // tabwriter's escape byte
			}
		}
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
