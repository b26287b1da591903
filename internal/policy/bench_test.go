package policy

import "testing"

// BenchmarkParse1000 parses a policy file declaring 1,000 resources, what a
// single-shot run over 1,000 documents loads first.
func BenchmarkParse1000(b *testing.B) {
	data := []byte(bench1000(1000))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Parse("/srv/readproof.toml", data)
		if err != nil || len(f.Resources()) != 1000 {
			b.Fatal(err)
		}
	}
}
