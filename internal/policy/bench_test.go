package policy

import (
	"fmt"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

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

// BenchmarkHeaderNames checks a source of 40,000 headers and 40,000
// public headers, the speed TestHeaderNamesInLinearTime guards by counting
// (the names compared one by one took seconds at 100,000).
func BenchmarkHeaderNames(b *testing.B) {
	const n = 40_000
	h, pub := make(map[string]string, n), make(map[string]string, n)
	for i := range n {
		h[fmt.Sprintf("H%d", i)] = "${T}"
		pub[fmt.Sprintf("P%d", i)] = "v"
	}
	f := &File{EnvAllow: []string{"T"}}
	sp := &keyPath{name: "source"}
	spec := &sourcespec.Spec{Type: "http", URL: "https://h/x", Headers: h, PublicHeaders: pub}
	b.ReportAllocs()
	for b.Loop() {
		c := &checker{file: "readproof.toml", fast: &fastIndex{}}
		c.source(f, sp, spec, keySet{c: c, parent: sp, bits: sourceKeyBit("type") | sourceKeyBit("url") | sourceKeyBit("headers") | sourceKeyBit("public_headers")})
		if len(c.errs) > 0 {
			b.Fatal(c.errs[0])
		}
	}
}
