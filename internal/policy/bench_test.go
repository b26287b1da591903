package policy

import (
	"fmt"
	"strings"
	"testing"
)

// BenchmarkParse1000 parses a policy file declaring 1,000 resources, what a
// single-shot run over 1,000 documents loads first.
func BenchmarkParse1000(b *testing.B) {
	var sb strings.Builder
	sb.WriteString("version = 1\n[sources]\nenv = [\"TOKEN\"]\n")
	for i := 0; i < 1000; i++ {
		switch i % 3 {
		case 0:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/docs/doc-%d\"\nsource = { type = \"filesystem\", path = \"docs/doc-%d.md\" }\n", i, i)
		case 1:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/web/doc-%d\"\npolicy = \"allow_stale\"\nmax_age = \"1h\"\nsource = { type = \"http\", url = \"https://docs.internal/%d\", headers = { Authorization = \"Bearer ${TOKEN}\" } }\n", i, i)
		default:
			fmt.Fprintf(&sb, "\n[[resource]]\nuri = \"readproof://bench/git/doc-%d\"\nsource = { type = \"git\", url = \"https://git.internal/r.git\", path = \"d/%d.md\" }\n", i, i)
		}
	}
	data := []byte(sb.String())
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		f, err := Parse("/srv/readproof.toml", data)
		if err != nil || len(f.Resources) != 1000 {
			b.Fatal(err)
		}
	}
}
