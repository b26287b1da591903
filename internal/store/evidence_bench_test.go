package store

import (
	"context"
	"fmt"
	"testing"

	"github.com/readproof/readproof/evidence"
)

// BenchmarkEvidenceExportVerify10k exports a 10,000-entry manifest with
// content through the store (manifest, replay, resource definitions from
// the observation chains, git facts) and verifies the bundle offline
// (target: under 1 s per op on 2 cores).
func BenchmarkEvidenceExportVerify10k(b *testing.B) {
	for _, size := range []int{1024, 4096} {
		b.Run(fmt.Sprintf("doc=%dB", size), func(b *testing.B) {
			toml, files, uris := manyDocs(10000, size)
			f := newFixture(b, toml, files)
			if _, _, err := f.s.RunOnce(context.Background(), "big", uris); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				data, _, err := f.s.ExportEvidence("big", EvidenceOptions{WithContent: true})
				if err != nil {
					b.Fatal(err)
				}
				rep, err := evidence.Verify(data, evidence.VerifyOptions{Offline: true})
				if err != nil || !rep.OK() || rep.ContentOK != 10000 {
					b.Fatalf("verify: %v\n%s", err, rep.Err())
				}
				b.SetBytes(int64(len(data)))
			}
		})
	}
}
