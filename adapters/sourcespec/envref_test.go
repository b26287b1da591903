package sourcespec

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestRefNames(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		ok   bool
	}{
		{"Bearer ${TOKEN}", []string{"TOKEN"}, true},
		{"${A}:${B_2}", []string{"A", "B_2"}, true},
		{"${B} ${A} ${B}", []string{"B", "A"}, true},
		{"costs $5", nil, true},
		{"$${NOT_A_REF}", nil, true},
		{"$$$${X}", nil, true},
		{"$$${X}", []string{"X"}, true},
		{"trailing $", nil, true},
		{"${", nil, false},
		{"${}", nil, false},
		{"${1A}", nil, false},
		{"${A-B}", nil, false},
		{"${A}${", nil, false},
	} {
		got, err := RefNames(tc.in)
		if (err == nil) != tc.ok || (tc.ok && !slices.Equal(got, tc.want)) {
			t.Errorf("RefNames(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// A value's references are found in time that grows with their number:
// repeats dropped by a search of the names found so far was the square
// of their number. The guard counts work, not time: the names compared
// one by one at 4n references are at most 4 times those at n (a search
// of them all was 16 times). BenchmarkAppendRefNames times it.
func TestAppendRefNamesInLinearTime(t *testing.T) {
	value := func(n int) string {
		var sb strings.Builder
		for i := range n {
			fmt.Fprintf(&sb, "${V%d}$${V%d}", i, i)
		}
		sb.WriteString("${V7}")
		return sb.String()
	}
	var compared [2]int
	for k, n := range []int{2_000, 8_000} {
		var buf [4]string
		refs, err := appendRefNames(buf[:0], value(n), &compared[k])
		if err != nil || len(refs) != n || refs[7] != "V7" || refs[n-1] != fmt.Sprintf("V%d", n-1) {
			t.Fatalf("%d refs, %v", len(refs), err)
		}
		if plain, err := AppendRefNames(nil, value(n)); err != nil || !slices.Equal(plain, refs) {
			t.Errorf("AppendRefNames and appendRefNames differ over %d references: %v", n, err)
		}
	}
	if compared[0] == 0 || compared[1] > 4*compared[0] {
		t.Errorf("names compared one by one: %d at 2,000 references, %d at 8,000; want at most 4 times as many", compared[0], compared[1])
	}
}

// AppendRefNames appends nothing to what dst held, and allocates nothing
// when dst has room for the names.
func TestAppendRefNamesKeepsDst(t *testing.T) {
	dst := make([]string, 1, 8)
	dst[0] = "KEEP"
	allocs := testing.AllocsPerRun(100, func() {
		got, err := AppendRefNames(dst, "a ${X} $${Y} ${Z}${X}")
		if err != nil || !slices.Equal(got, []string{"KEEP", "X", "Z"}) {
			t.Fatalf("got %q, %v", got, err)
		}
	})
	if allocs != 0 {
		t.Errorf("%v allocations, want none", allocs)
	}
	got, err := AppendRefNames(dst, "${X} ${")
	if err == nil || !slices.Equal(got, []string{"KEEP"}) {
		t.Errorf("on an error: %q, %v; want dst as it was and the error", got, err)
	}
}

// FuzzAppendRefNames: the scan finds the references ParseRefs finds, in
// order and without repeats, and the same error.
func FuzzAppendRefNames(f *testing.F) {
	for _, s := range []string{
		"", "Bearer ${TOKEN}", "$${X}", "${A}${B}${A}", "${", "${}", "${1A}", "$", "a$", "a$b$",
		"${A", "${A}}", "$${A}${B}", "${A-B}", "x${A}y${B}z${A}", "$$$", "${A}$",
		// more names than a search finds repeats among (maxRefSearch)
		manyRefs(maxRefSearch+2) + "${A0}", manyRefs(maxRefSearch+1) + "${", manyRefs(maxRefSearch) + "${X}${A1}",
		manyRefs(maxRefSearch) + "${A3}${A3}${Y}${Y}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var want []string
		parts, werr := ParseRefs(s)
		seen := map[string]bool{}
		for _, p := range parts {
			if p.Ref && !seen[p.Text] {
				seen[p.Text] = true
				want = append(want, p.Text)
			}
		}
		var buf [2]string
		got, gerr := AppendRefNames(buf[:0], s)
		if (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%q: error %v, ParseRefs %v", s, gerr, werr)
		}
		if werr == nil && !slices.Equal(got, want) {
			t.Fatalf("%q: refs %q, ParseRefs %q", s, got, want)
		}
	})
}

// manyRefs is a value of n references to distinct names.
func manyRefs(n int) string {
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "${A%d}", i)
	}
	return sb.String()
}

// BenchmarkAppendRefNames finds the references of a value of 80,000 of
// them, each followed by an escaped repeat, the speed
// TestAppendRefNamesInLinearTime guards by counting.
func BenchmarkAppendRefNames(b *testing.B) {
	const n = 80_000
	var sb strings.Builder
	for i := range n {
		fmt.Fprintf(&sb, "${V%d}$${V%d}", i, i)
	}
	v := sb.String()
	dst := make([]string, 0, n)
	b.SetBytes(int64(len(v)))
	b.ReportAllocs()
	for b.Loop() {
		refs, err := AppendRefNames(dst[:0], v)
		if err != nil || len(refs) != n {
			b.Fatal(len(refs), err)
		}
	}
}
