package manifest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"testing"
)

// compareMaps is Compare as it was, with maps keyed by URI and occurrence.
func compareMaps(a, b *Manifest) *Comparison {
	type key struct {
		uri string
		n   int
	}
	seen := map[string]int{}
	inA := map[key]*Entry{}
	var orderA []key
	for i := range a.Entries {
		e := &a.Entries[i]
		k := key{e.URI, seen[e.URI]}
		seen[e.URI]++
		inA[k] = e
		orderA = append(orderA, k)
	}
	seen = map[string]int{}
	used := map[key]bool{}
	c := &Comparison{Changes: []Change{}}
	for i := range b.Entries {
		e := &b.Entries[i]
		k := key{e.URI, seen[e.URI]}
		seen[e.URI]++
		old, ok := inA[k]
		switch {
		case !ok:
			c.Changes = append(c.Changes, Change{Kind: Added, URI: e.URI, B: e})
			c.Added++
		case old.ContentHash == e.ContentHash && old.Ref == e.Ref:
			used[k] = true
			c.Changes = append(c.Changes, Change{Kind: Unchanged, URI: e.URI, A: old, B: e})
			c.Unchanged++
		default:
			used[k] = true
			c.Changes = append(c.Changes, Change{Kind: Changed, URI: e.URI, A: old, B: e})
			c.Changed++
		}
	}
	for _, k := range orderA {
		if !used[k] {
			e := inA[k]
			c.Changes = append(c.Changes, Change{Kind: Removed, URI: e.URI, A: e})
			c.Removed++
		}
	}
	return c
}

// Compare pairs the same entries as the map-based pairing did, with
// repeated URIs, tags, additions and removals, in the same order.
func TestCompareMatchesMaps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	side := func() *Manifest {
		m := &Manifest{}
		for i := range r.IntN(12) {
			m.Entries = append(m.Entries, Entry{Position: i, URI: fmt.Sprintf("readproof://n/d%d", r.IntN(5)),
				ContentHash: fmt.Sprint(r.IntN(2)), Ref: []string{"", "", "v1"}[r.IntN(3)]})
		}
		return m
	}
	for i := 0; i < 2000; i++ {
		a, b := side(), side()
		got, want := Compare(a, b), compareMaps(a, b)
		got.Changes = append([]Change{}, got.Changes...) // capacity aside
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("case %d: Compare\n%+v\nwant\n%+v", i, got, want)
		}
	}
}

// CompareViews pairs the entries Compare pairs, in the same order, with
// the same counts.
func TestCompareViewsMatchesCompare(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	side := func() *Manifest {
		m := &Manifest{}
		for i := range r.IntN(12) {
			m.Entries = append(m.Entries, Entry{Position: i, URI: fmt.Sprintf("readproof://n/d%d", r.IntN(5)),
				ContentHash: fmt.Sprint(r.IntN(2)), Ref: []string{"", "", "v1"}[r.IntN(3)]})
		}
		return m
	}
	at := func(e *Entry) int {
		if e == nil {
			return -1
		}
		return e.Position
	}
	for i := 0; i < 2000; i++ {
		a, b := side(), side()
		c, v := Compare(a, b), CompareViews(ViewOf(a), ViewOf(b))
		want := &ViewComparison{Pairs: []Pair{}, Added: c.Added, Removed: c.Removed, Changed: c.Changed, Unchanged: c.Unchanged}
		for _, ch := range c.Changes {
			want.Pairs = append(want.Pairs, Pair{Kind: ch.Kind, URI: ch.URI, A: at(ch.A), B: at(ch.B)})
		}
		v.Pairs = append([]Pair{}, v.Pairs...)
		if !reflect.DeepEqual(v, want) {
			t.Fatalf("case %d: CompareViews\n%+v\nwant\n%+v", i, v, want)
		}
	}
}
