package commands

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/readproof/readproof/manifest"
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

// TestWriteEntryTableMatchesWriteTable: the table of `manifest` is
// writeTable of its rows, with and without tags, for ASCII cells of each
// length around a word and for cells of multi-byte runes, control bytes and
// tabwriter's escape byte (which no valid manifest has, but a View may).
func TestWriteEntryTableMatchesWriteTable(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	// Tab and 0xff send the table to tabwriter (through writeTable, the
	// comparison itself), so they go into one cell of every fifth round
	// only: the others take writeEntryTable's own path, multi-byte runes
	// and control bytes included.
	words := []string{"", "a", "readproof://bench/docs/d0001", "é", "naïve☃", "\x01", "\x1f", " ", "~", "\x7f", "use_current"}
	cell := func() string {
		var b strings.Builder
		for range r.IntN(4) {
			w := words[r.IntN(len(words))]
			if r.IntN(2) == 0 {
				w = strings.Repeat("x", r.IntN(17)) + w
			}
			b.WriteString(w)
		}
		return b.String()
	}
	ownPath := 0 // rounds of entries beyond ASCII that writeEntryTable wrote itself
	for round := range 300 {
		v := &manifest.View{}
		for i := range r.IntN(12) {
			en := manifest.ViewEntry{Position: i * r.IntN(2000), URI: cell(), Snapshot: cell(), ContentHash: cell(), Decision: cell()}
			if round%2 == 0 {
				en.Ref = cell()
			}
			if round%3 == 0 {
				// ASCII only: the path without tabwriter
				for _, s := range []*string{&en.URI, &en.Ref, &en.Snapshot, &en.ContentHash, &en.Decision} {
					*s = strings.Map(func(c rune) rune { return max(' ', min(c, '~')) }, *s)
				}
			}
			v.Entries = append(v.Entries, en)
		}
		if round%5 == 0 && len(v.Entries) > 0 {
			v.Entries[0].URI += []string{"\t", "\xff"}[r.IntN(2)]
		}
		fast := true
		for i := range v.Entries {
			for _, c := range entryCells(nil, &v.Entries[i], true) {
				if _, ok := plainCell(c); !ok {
					fast = false
				}
			}
		}
		if fast && len(v.Entries) > 0 && round%3 != 0 {
			ownPath++
		}
		var got, want bytes.Buffer
		if err := writeEntryTable(&got, v); err != nil {
			t.Fatal(err)
		}
		withRef := false
		for _, en := range v.Entries {
			withRef = withRef || en.Ref != ""
		}
		if err := writeTable(&want, entryRows(v, entryHead(withRef), withRef)); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("entries %+v:\nwriteEntryTable:\n%s\nwriteTable:\n%s", v.Entries, got.String(), want.String())
		}
	}
	if ownPath < 100 {
		t.Errorf("only %d of 300 rounds of entries beyond ASCII took writeEntryTable's own path", ownPath)
	}
}
