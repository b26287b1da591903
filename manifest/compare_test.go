package manifest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// compareMaps is Compare written with maps: entries keyed by URI, tag
// and occurrence pair first, then those left of a URI by their order
// among its entries left.
func compareMaps(a, b *Manifest) *Comparison {
	type key struct {
		uri, ref string
		n        int
	}
	match := map[int]int{} // entry of B -> entry of A
	usedA := map[int]bool{}
	pass := func(keyOf func(e *Entry) (string, string)) {
		seen := map[[2]string]int{}
		inA := map[key]int{}
		for i := range a.Entries {
			if usedA[i] {
				continue
			}
			uri, ref := keyOf(&a.Entries[i])
			inA[key{uri, ref, seen[[2]string{uri, ref}]}] = i
			seen[[2]string{uri, ref}]++
		}
		seen = map[[2]string]int{}
		for i := range b.Entries {
			if _, ok := match[i]; ok {
				continue
			}
			uri, ref := keyOf(&b.Entries[i])
			k := key{uri, ref, seen[[2]string{uri, ref}]}
			seen[[2]string{uri, ref}]++
			if j, ok := inA[k]; ok {
				match[i], usedA[j] = j, true
			}
		}
	}
	pass(func(e *Entry) (string, string) { return e.URI, e.Ref })
	pass(func(e *Entry) (string, string) { return e.URI, "" })
	c := &Comparison{Changes: []Change{}}
	for i := range b.Entries {
		e := &b.Entries[i]
		j, ok := match[i]
		switch {
		case !ok:
			c.Changes = append(c.Changes, Change{Kind: Added, URI: e.URI, B: e})
			c.Added++
		case a.Entries[j].ContentHash == e.ContentHash && a.Entries[j].Ref == e.Ref:
			c.Changes = append(c.Changes, Change{Kind: Unchanged, URI: e.URI, A: &a.Entries[j], B: e})
			c.Unchanged++
		default:
			c.Changes = append(c.Changes, Change{Kind: Changed, URI: e.URI, A: &a.Entries[j], B: e})
			c.Changed++
		}
	}
	for j := range a.Entries {
		if !usedA[j] {
			e := &a.Entries[j]
			c.Changes = append(c.Changes, Change{Kind: Removed, URI: e.URI, A: e})
			c.Removed++
		}
	}
	return c
}

// An entry both runs mounted alike (the same URI and tag) pairs with
// itself, unchanged, even when the other run mounted its URI another way
// too; a URI read by tag in one run and plainly in the other still pairs,
// as a change of tag.
func TestComparePairsSameIdentity(t *testing.T) {
	e := func(pos int, uri, ref, hash string) Entry {
		return Entry{Position: pos, URI: uri, Ref: ref, ContentHash: hash}
	}
	kinds := func(c *Comparison) string {
		var out []string
		for _, ch := range c.Changes {
			s := ch.Kind + " " + ch.URI
			if ch.A != nil {
				s += fmt.Sprintf(" a%d@%s", ch.A.Position, ch.A.Ref)
			}
			if ch.B != nil {
				s += fmt.Sprintf(" b%d@%s", ch.B.Position, ch.B.Ref)
			}
			out = append(out, s)
		}
		return strings.Join(out, "; ")
	}
	for _, tc := range []struct {
		name string
		a, b []Entry
		want string
	}{
		{"plain and tagged against tagged", []Entry{e(0, "d", "", "1"), e(1, "d", "prod", "2")}, []Entry{e(0, "d", "prod", "2")},
			"unchanged d a1@prod b0@prod; removed d a0@"},
		{"tagged against plain and tagged", []Entry{e(0, "d", "prod", "2")}, []Entry{e(0, "d", "", "1"), e(1, "d", "prod", "2")},
			"added d b0@; unchanged d a0@prod b1@prod"},
		{"tag against plain", []Entry{e(0, "d", "prod", "2")}, []Entry{e(0, "d", "", "1")},
			"changed d a0@prod b0@"},
		{"two tags, one kept", []Entry{e(0, "d", "v1", "1"), e(1, "d", "v2", "2")}, []Entry{e(0, "d", "v2", "2"), e(1, "d", "v3", "3")},
			"unchanged d a1@v2 b0@v2; changed d a0@v1 b1@v3"},
	} {
		a, b := &Manifest{Entries: tc.a}, &Manifest{Entries: tc.b}
		if got := kinds(Compare(a, b)); got != tc.want {
			t.Errorf("%s: Compare = %s, want %s", tc.name, got, tc.want)
		}
		checkCompareViews(t, a, b)
	}
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
