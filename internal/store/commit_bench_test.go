package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// BenchmarkCommitRun1000Changed20 commits a run of 1,000 documents of which
// 20 changed since the previous run: the cost the journal's document view
// adds to a run grows with the changed entries (issue 16: at most 1.2x what
// a run cost before the view; compare this benchmark on the commit before
// the view).
func BenchmarkCommitRun1000Changed20(b *testing.B) {
	toml, files, uris := manyDocs(1000, 4096)
	f := newFixture(b, toml, files)
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "base", uris); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var cpu time.Duration
	defer func() { b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op") }()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for k := 0; k < 20; k++ {
			d := (i*20 + k*50) % 1000
			name := filepath.Join(f.dir, fmt.Sprintf("docs/d%05d.md", d))
			if err := os.WriteFile(name, []byte(fmt.Sprintf("doc %05d, edit %d\n", d, i)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		c0 := testproc.CPUTime()
		if _, _, err := f.s.RunOnce(ctx, fmt.Sprintf("run-%d", i), uris); err != nil {
			b.Fatal(err)
		}
		cpu += testproc.CPUTime() - c0
	}
}
