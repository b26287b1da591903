package store

import (
	"slices"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestJournalLast: the journal's update moves to the end, the others keep
// their order, and a list without it (or with it last) is unchanged.
func TestJournalLast(t *testing.T) {
	names := func(ups []gitstore.RefUpdate) []string {
		var out []string
		for _, u := range ups {
			out = append(out, u.Name)
		}
		return out
	}
	up := func(names ...string) []gitstore.RefUpdate {
		var out []gitstore.RefUpdate
		for _, n := range names {
			out = append(out, gitstore.RefUpdate{Name: n})
		}
		return out
	}
	run, open := RunsPrefix+"r1", OpenPrefix+"r1"
	for _, c := range []struct{ in, want []string }{
		{[]string{JournalRef, run, open}, []string{run, open, JournalRef}},
		{[]string{run, JournalRef, open}, []string{run, open, JournalRef}},
		{[]string{run, open, JournalRef}, []string{run, open, JournalRef}},
		{[]string{run, open}, []string{run, open}},
		{nil, nil},
	} {
		in := up(c.in...)
		got := names(JournalLast(in))
		if !slices.Equal(got, c.want) {
			t.Errorf("JournalLast(%v) = %v, want %v", c.in, got, c.want)
		}
		if !slices.Equal(names(in), c.in) {
			t.Errorf("JournalLast changed its argument: %v, was %v", names(in), c.in)
		}
	}
}
