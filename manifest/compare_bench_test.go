package manifest

import (
	"fmt"
	"testing"
)

// BenchmarkCompare1000: the pairing `readproof diff` makes of two runs of
// 1,000 entries, 10 of them changed.
func BenchmarkCompare1000(b *testing.B) {
	mk := func(changed int) *Manifest {
		m := &Manifest{}
		for i := range 1000 {
			h := fmt.Sprintf("sha256:%064d", i)
			if i < changed {
				h = fmt.Sprintf("sha256:%064d", i+100000)
			}
			m.Entries = append(m.Entries, Entry{URI: fmt.Sprintf("readproof://bench/docs/d%05d", i), ContentHash: h})
		}
		return m
	}
	a, c := mk(0), mk(10)
	b.ReportAllocs()
	for b.Loop() {
		if got := Compare(a, c); got.Changed != 10 {
			b.Fatalf("changed %d", got.Changed)
		}
	}
}
