package share

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/manifest"
)

// writeRuns appends n runs to the journal of p's store without resolving
// sources (the objects are the ones readproof writes: manifest, run tag,
// journal commit with its view): run k delivers perRun documents of pool,
// two of them in a version of its own. Runs are created one second apart
// from start.
func writeRuns(tb testing.TB, p *project, prefix string, n, perRun int, pool []string, start time.Time) {
	tb.Helper()
	g := p.s.Git()
	tip, err := g.Ref(store.JournalRef)
	if err != nil {
		tb.Fatal(err)
	}
	var ups []gitstore.RefUpdate
	old := tip
	for k := 0; k < n; k++ {
		at := start.Add(time.Duration(k) * time.Second)
		m := &manifest.Manifest{Format: manifest.Format, RunID: fmt.Sprintf("%s-%05d", prefix, k), StartedAt: at, CreatedAt: at, Entries: []manifest.Entry{}}
		for i := 0; i < perRun; i++ {
			d := (k*perRun + i) % len(pool)
			body := fmt.Sprintf("document %d\n", d)
			if i < 2 {
				body = fmt.Sprintf("document %d, %s version %d\n", d, prefix, k)
			}
			blob, err := g.PutBlob([]byte(body))
			if err != nil {
				tb.Fatal(err)
			}
			m.Entries = append(m.Entries, manifest.Entry{Position: i, URI: pool[d], Snapshot: string(blob), ContentHash: contentHash([]byte(body)),
				SourceRevision: "r", ObservedAt: at, Decision: manifest.DecisionFetch, Bytes: int64(len(body)), ContentType: "text/plain"})
		}
		manifest.AssignFiles(m.Entries)
		data, err := manifest.Encode(m)
		if err != nil {
			tb.Fatal(err)
		}
		mb, err := g.PutBlob(data)
		if err != nil {
			tb.Fatal(err)
		}
		ed := gitstore.NewTreeEditor(g, "")
		if err := ed.Set(mb, "manifest.json"); err != nil {
			tb.Fatal(err)
		}
		for _, e := range m.Entries {
			if err := ed.Set(gitstore.OID(e.Snapshot), strings.Split(e.File, "/")...); err != nil {
				tb.Fatal(err)
			}
		}
		mt, err := ed.Write()
		if err != nil {
			tb.Fatal(err)
		}
		sig := signature(at)
		mid, err := g.PutCommit(gitstore.Commit{Tree: mt, Author: sig, Committer: sig, Message: manifest.Message(m)})
		if err != nil {
			tb.Fatal(err)
		}
		if tip, err = recordOnJournal(g, tip, m.RunID, mid, at); err != nil {
			tb.Fatal(err)
		}
		ups = append(ups, gitstore.RefUpdate{Name: store.RunsPrefix + m.RunID, New: mid})
	}
	ups = append(ups, gitstore.RefUpdate{Name: store.JournalRef, Old: old, New: tip})
	if err := g.Update(ups...); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkPullDivergedJournals1000x1000: a store pulls a remote whose
// journal diverged from its own by 1,000 runs on each side (20 of 200
// documents per run, 2 changed per run); the pull verifies the remote's
// 1,000 new manifests and journal commits (each commit's view included)
// and merges the journals, computing the merged view (issue 16: the view in
// under 2 s; "view" reports the merge's share, measured apart).
func BenchmarkPullDivergedJournals1000x1000(b *testing.B) {
	needGit(b)
	pool := make([]string, 200)
	for i := range pool {
		pool[i] = fmt.Sprintf("readproof://bench/area%d/doc%03d", i%7, i)
	}
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	var total, view, totalCPU, viewCPU time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		local := newProject(b, map[string]string{})
		remote := newProject(b, map[string]string{})
		for _, p := range []*project{local, remote} {
			writeRuns(b, p, "base", 10, 20, pool, start)
		}
		writeRuns(b, local, "local", 1000, 20, pool, start.Add(time.Hour))
		writeRuns(b, remote, "remote", 1000, 20, pool, start.Add(time.Hour+time.Second/2))
		addRemote(b, local, "origin", remote.path())
		b.StartTimer()
		t0, c0 := time.Now(), testproc.CPUTime()
		res, err := Pull(context.Background(), local.s, "origin", Options{})
		total, totalCPU = total+time.Since(t0), totalCPU+testproc.CPUTime()-c0
		if err != nil || res.Journal != "merged" || len(res.NewRuns) != 1000 {
			b.Fatalf("pull: %+v, %v", res, err)
		}
		b.StopTimer()
		lm := gitstore.OID(git(b, local.path(), "rev-parse", "main^1"))
		rm := gitstore.OID(git(b, local.path(), "rev-parse", "main^2"))
		t1, c1 := time.Now(), testproc.CPUTime()
		tree, err := store.JournalTree(local.s.Git(), []gitstore.OID{lm, rm}, "")
		view, viewCPU = view+time.Since(t1), viewCPU+testproc.CPUTime()-c1
		if err != nil || string(tree) != git(b, local.path(), "rev-parse", "main^{tree}") {
			b.Fatalf("merged view %s (%v)", tree, err)
		}
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/pull")
	b.ReportMetric(view.Seconds()/float64(b.N), "s/view")
	b.ReportMetric(totalCPU.Seconds()/float64(b.N), "cpu-s/pull")
	b.ReportMetric(viewCPU.Seconds()/float64(b.N), "cpu-s/view")
}
