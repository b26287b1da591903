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
	for i := 0; i < 2000; i++ {
		checkCompareViews(t, side(), side())
	}
}

// checkCompareViews: Compare pairs what compareMaps pairs, and
// CompareViews of a and b's Views the same, by position. Both pair through
// pairEntries (since 06b3779): held to each other alone, a fault there
// would pass (with the ref ignored, the fuzz's seeds passed).
func checkCompareViews(t *testing.T, a, b *Manifest) {
	t.Helper()
	at := func(e *Entry) int {
		if e == nil {
			return -1
		}
		return e.Position
	}
	c, v := Compare(a, b), CompareViews(ViewOf(a), ViewOf(b))
	if got, ref := (&Comparison{Changes: append([]Change{}, c.Changes...), Added: c.Added, Removed: c.Removed, Changed: c.Changed, Unchanged: c.Unchanged}), compareMaps(a, b); !reflect.DeepEqual(got, ref) {
		t.Fatalf("Compare\n%+v\nwant (compareMaps)\n%+v\nof\n%+v\n%+v", got, ref, a.Entries, b.Entries)
	}
	want := &ViewComparison{Pairs: []Pair{}, Added: c.Added, Removed: c.Removed, Changed: c.Changed, Unchanged: c.Unchanged}
	for _, ch := range c.Changes {
		want.Pairs = append(want.Pairs, Pair{Kind: ch.Kind, URI: ch.URI, A: at(ch.A), B: at(ch.B)})
	}
	v.Pairs = append([]Pair{}, v.Pairs...)
	if !reflect.DeepEqual(v, want) {
		t.Fatalf("CompareViews\n%+v\nwant\n%+v\nof\n%+v\n%+v", v, want, a.Entries, b.Entries)
	}
}

// FuzzCompareViewsMatchesCompare holds CompareViews to Compare on any two
// manifests the fuzzer's bytes spell: the first byte is how many entries A
// has, each further byte an entry (its URI, content hash and ref from a few
// each, so that URIs repeat and pair by occurrence).
func FuzzCompareViewsMatchesCompare(f *testing.F) {
	f.Add([]byte{0})
	f.Add([]byte{2, 0x00, 0x01, 0x00, 0x21, 0x01})
	f.Add([]byte{3, 0x10, 0x10, 0x12, 0x10, 0x52, 0x90, 0x10})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 || len(data) > 512 {
			return
		}
		na := min(int(data[0]), len(data)-1)
		build := func(bs []byte) *Manifest {
			m := &Manifest{}
			for i, c := range bs {
				m.Entries = append(m.Entries, Entry{Position: i, URI: fmt.Sprintf("readproof://n/d%d", c&7),
					ContentHash: fmt.Sprint(c >> 3 & 3), Ref: []string{"", "v1", "v2", ""}[c>>5&3]})
			}
			return m
		}
		checkCompareViews(t, build(data[1:1+na]), build(data[1+na:]))
	})
}
