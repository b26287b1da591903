package storecheck_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/readproof/readproof/storecheck"
)

// buildRuns returns a project with n committed runs, each reading one tiny
// document whose content changes every run (so every run records a new
// observation and a new snapshot).
func buildRuns(b testing.TB, n int) *project {
	p := newProject(b, map[string]string{"doc.md": "version 0\n"}, "")
	for i := 0; i < n; i++ {
		writeFile(b, p.dir+"/doc.md", fmt.Sprintf("version %d\n", i))
		p.run(b, fmt.Sprintf("run-%05d", i), uriOf("doc.md"))
	}
	return p
}

// BenchmarkVerify10kRuns runs the default (structure) check of a store of
// 10,000 committed runs (target: under 10 s).
func BenchmarkVerify10kRuns(b *testing.B) {
	p := buildRuns(b, 10000)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := storecheck.Check(context.Background(), p.s, storecheck.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if !rep.OK() || rep.Counts.Runs != 10000 {
			b.Fatalf("%s\n%s", rep.Summary(), problems(rep))
		}
	}
}
