package store

import (
	"context"
	"fmt"
	"testing"
)

// BenchmarkRunOnce1000Docs records a single-shot run mounting 1,000
// documents of 4 KiB (target: under 0.5 s per run on 2 cores).
func BenchmarkRunOnce1000Docs(b *testing.B) {
	toml, files, uris := manyDocs(1000, 4096)
	f := newFixture(b, toml, files)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := f.s.RunOnce(ctx, fmt.Sprintf("run-%d", i), uris); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReplay1000Docs replays that manifest (target: under 0.15 s).
func BenchmarkReplay1000Docs(b *testing.B) {
	toml, files, uris := manyDocs(1000, 4096)
	f := newFixture(b, toml, files)
	if _, _, err := f.s.RunOnce(context.Background(), "big", uris); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := f.s.Replay("big"); err != nil {
			b.Fatal(err)
		}
	}
}

// benchStoreWithRuns returns a fixture holding n committed runs.
func benchStoreWithRuns(b *testing.B, n int) (*fixture, []string) {
	toml, files, uris := manyDocs(4, 1024)
	f := newFixture(b, toml, files)
	ctx := context.Background()
	for i := 0; i < n; i++ {
		if _, _, err := f.s.RunOnce(ctx, fmt.Sprintf("hist-%05d", i), uris[:1]); err != nil {
			b.Fatal(err)
		}
	}
	return f, uris
}

// BenchmarkMount compares mount latency on an empty store and on one that
// holds 10,000 runs (target: within 1.25x).
func BenchmarkMount(b *testing.B) {
	for _, n := range []int{0, 10000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			f, uris := benchStoreWithRuns(b, n)
			if err := f.s.StartRun("open"); err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.s.Mount(ctx, "open", uris[i%len(uris)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkManifest compares manifest lookup on an empty-ish store and on one
// with 10,000 runs.
func BenchmarkManifest(b *testing.B) {
	for _, n := range []int{1, 10000} {
		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			f, _ := benchStoreWithRuns(b, n)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, err := f.s.Manifest("hist-00000"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
