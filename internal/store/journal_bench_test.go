package store

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/manifest"
)

// benchManifest writes a manifest of run id delivering docs (their
// snapshots given) at time at, and returns its commit.
func benchManifest(b testing.TB, s *Store, id string, at time.Time, uris []string, snaps []gitstore.OID) (gitstore.OID, *manifest.Manifest) {
	m := &manifest.Manifest{Format: manifest.Format, RunID: id, StartedAt: at, CreatedAt: at, Entries: []manifest.Entry{}}
	for i, u := range uris {
		m.Entries = append(m.Entries, manifest.Entry{Position: i, URI: u, Snapshot: string(snaps[i]),
			ContentHash: "sha256:" + strings.Repeat("0", 64), SourceRevision: "r", ObservedAt: at, Decision: "fetch", ContentType: "text/plain"})
	}
	mid, err := s.writeManifest(m)
	if err != nil {
		b.Fatal(err)
	}
	return mid, m
}

// benchJournal appends runs to the journal tip without resolving sources:
// run k delivers docs of the pool, changing two of them.
func benchJournal(b testing.TB, s *Store, tip gitstore.OID, prefix string, runs, perRun int, pool []string, at time.Time) gitstore.OID {
	for k := 0; k < runs; k++ {
		uris := make([]string, perRun)
		snaps := make([]gitstore.OID, perRun)
		for i := range uris {
			d := (k*perRun + i) % len(pool)
			uris[i] = pool[d]
			body := fmt.Sprintf("doc %d\n", d)
			if i < 2 {
				body = fmt.Sprintf("doc %d, %s edit %d\n", d, prefix, k)
			}
			id, err := s.git.PutBlob([]byte(body))
			if err != nil {
				b.Fatal(err)
			}
			snaps[i] = id
		}
		mid, m := benchManifest(b, s, fmt.Sprintf("%s-%05d", prefix, k), at.Add(time.Duration(k)*time.Second), uris, snaps)
		var parents []gitstore.OID
		if tip != "" {
			parents = []gitstore.OID{tip}
		}
		tree, err := writingBuilder(s.git).withRun(mid, m).tree(parents, mid)
		if err != nil {
			b.Fatal(err)
		}
		sig := s.signature(at)
		if tip, err = s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: append(parents, mid), Author: sig, Committer: sig,
			Message: fmt.Sprintf("record run %s\n\nmanifest %s\n", m.RunID, mid)}); err != nil {
			b.Fatal(err)
		}
	}
	return tip
}

// BenchmarkJournalMerge1000x1000 merges two journals that diverged by
// 1,000 runs each (20 of 200 documents per run, 2 changed per run) and
// computes the merged view, as a pull does (issue 16: under 2 s); then
// checks, as the pulling side does, every commit the other side brings
// (ExpectedJournalTree).
func BenchmarkJournalMerge1000x1000(b *testing.B) {
	f := newFixture(b, "", nil)
	pool := make([]string, 200)
	for i := range pool {
		pool[i] = fmt.Sprintf("readproof://bench/area%d/doc%03d", i%7, i)
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	main, err := f.s.ref(JournalRef)
	if err != nil {
		b.Fatal(err)
	}
	base := benchJournal(b, f.s, main, "base", 10, 20, pool, at)
	left := benchJournal(b, f.s, base, "left", 1000, 20, pool, at.Add(time.Hour))
	right := benchJournal(b, f.s, base, "right", 1000, 20, pool, at.Add(time.Hour+time.Second/2))
	b.Run("merge", func(b *testing.B) {
		cpu := testproc.CPUTime()
		for i := 0; i < b.N; i++ {
			if _, err := JournalTree(f.s.git, []gitstore.OID{left, right}, ""); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric((testproc.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
	})
	b.Run("check-1000-new-commits", func(b *testing.B) {
		cpu := testproc.CPUTime()
		defer func() { b.ReportMetric((testproc.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op") }()
		for i := 0; i < b.N; i++ {
			views := CachingReader(f.s.git)
			for id := right; id != base; {
				c, err := f.s.git.Commit(id)
				if err != nil {
					b.Fatal(err)
				}
				want, err := ExpectedJournalTree(views, id)
				if err != nil || want != c.Tree {
					b.Fatalf("commit %s: tree %s, expected %s (%v)", id, c.Tree, want, err)
				}
				id = c.Parents[0]
			}
		}
	})
}

// BenchmarkJournalApply1000Changed20 is the view's share of committing a
// run: a run of 1,000 documents, 20 of them changed, applied to a view of
// 1,000 documents.
func BenchmarkJournalApply1000Changed20(b *testing.B) {
	f := newFixture(b, "", nil)
	pool := make([]string, 1000)
	snaps := make([]gitstore.OID, 1000)
	for i := range pool {
		pool[i] = fmt.Sprintf("readproof://bench/docs/d%05d", i)
		id, err := f.s.git.PutBlob([]byte(fmt.Sprintf("doc %d\n", i)))
		if err != nil {
			b.Fatal(err)
		}
		snaps[i] = id
	}
	at := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	tip, err := f.s.ref(JournalRef)
	if err != nil {
		b.Fatal(err)
	}
	mid, m := benchManifest(b, f.s, "base", at, pool, snaps)
	tree, err := writingBuilder(f.s.git).withRun(mid, m).tree([]gitstore.OID{tip}, mid)
	if err != nil {
		b.Fatal(err)
	}
	sig := f.s.signature(at)
	if tip, err = f.s.git.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip, mid}, Author: sig, Committer: sig, Message: "record run base\n"}); err != nil {
		b.Fatal(err)
	}
	next := append([]gitstore.OID(nil), snaps...)
	for k := 0; k < 20; k++ {
		if next[k*50], err = f.s.git.PutBlob([]byte(fmt.Sprintf("doc %d, edited\n", k*50))); err != nil {
			b.Fatal(err)
		}
	}
	mid2, m2 := benchManifest(b, f.s, "next", at.Add(time.Second), pool, next)
	b.ResetTimer()
	cpu := testproc.CPUTime()
	for i := 0; i < b.N; i++ {
		if _, err := writingBuilder(f.s.git).withRun(mid2, m2).tree([]gitstore.OID{tip}, mid2); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric((testproc.CPUTime()-cpu).Seconds()/float64(b.N), "cpu-s/op")
}
