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

// BenchmarkEvidenceExportChecked1k exports a 1,000-entry manifest of 4 KiB
// documents with content, as `evidence export --with-content` does, with
// the store checks export makes since session 24 (checked) and without
// them (unchecked): their cost is the difference (budget: 5% of export and
// offline verify, docs/evidence.md "What export checks before it writes").
func BenchmarkEvidenceExportChecked1k(b *testing.B) {
	toml, files, uris := manyDocs(1000, 4096)
	f := newFixture(b, toml, files)
	if _, _, err := f.s.RunOnce(context.Background(), "big", uris); err != nil {
		b.Fatal(err)
	}
	for _, checked := range []bool{false, true} {
		name := "unchecked"
		if checked {
			name = "checked"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				var data []byte
				var err error
				if checked {
					var checks []evidence.Check
					data, _, checks, err = f.s.ExportEvidenceChecked("big", EvidenceOptions{WithContent: true}, EvidenceCheckKeys{})
					for _, c := range checks {
						if !c.OK {
							b.Fatalf("check %s failed: %s", c.Name, c.Detail)
						}
					}
				} else {
					data, _, err = f.s.ExportEvidence("big", EvidenceOptions{WithContent: true})
				}
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(data)))
			}
		})
	}
}
