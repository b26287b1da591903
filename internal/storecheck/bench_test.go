package storecheck_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/storecheck"
)

// buildRuns returns a project with n committed runs, each reading one tiny
// document whose content changes every run (so every run records a new
// observation and a new snapshot).
func buildRuns(b testing.TB, n int) *project { return buildRunsOf(b, n, 1) }

// buildRunsOf returns a project with n committed runs, each reading the
// same per documents, every one of them changed before every run: n*per
// observations of n*per distinct snapshots.
func buildRunsOf(b testing.TB, n, per int) *project {
	docs := map[string]string{}
	var uris []string
	for d := 0; d < per; d++ {
		name := fmt.Sprintf("doc%d.md", d)
		if per == 1 {
			name = "doc.md"
		}
		docs[name] = "version 0\n"
		uris = append(uris, uriOf(name))
	}
	p := newProject(b, docs, "")
	for i := 0; i < n; i++ {
		for name := range docs {
			writeFile(b, p.dir+"/"+name, fmt.Sprintf("%s version %d\n", name, i))
		}
		p.run(b, fmt.Sprintf("run-%05d", i), uris...)
	}
	return p
}

// BenchmarkVerify10kRuns checks a store of 10,000 committed runs (target
// for the default structure check: under 10 s), with --read-data, and the
// structure check again after gc packed the store. Building the store
// takes about a minute and is not timed.
func BenchmarkVerify10kRuns(b *testing.B) {
	p := buildRuns(b, 10000)
	check := func(b *testing.B, opts storecheck.Options) {
		for i := 0; i < b.N; i++ {
			rep, err := storecheck.Check(context.Background(), p.s, opts)
			if err != nil {
				b.Fatal(err)
			}
			if !rep.OK() || len(rep.Problems) != 0 || rep.Counts.Runs != 10000 || rep.Counts.Observations != 10000 {
				b.Fatalf("%s\n%s", rep.Summary(), problems(rep))
			}
		}
	}
	b.Run("structure", func(b *testing.B) { check(b, storecheck.Options{}) })
	b.Run("read-data", func(b *testing.B) { check(b, storecheck.Options{ReadData: true}) })
	if _, err := p.s.GC(context.Background(), gitstore.GCOptions{Grace: time.Hour}); err != nil {
		b.Fatal(err)
	}
	b.Run("structure-after-gc", func(b *testing.B) { check(b, storecheck.Options{}) })
}
