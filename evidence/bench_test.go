package evidence

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"testing"
	"time"
)

// benchInput is a manifest of n entries with size bytes of content each.
func benchInput(n, size int) Input {
	entries := make([]Entry, n)
	for i := range entries {
		content := make([]byte, size)
		for j := range content {
			content[j] = byte('a' + (i+j)%26)
		}
		copy(content, fmt.Sprintf("document %d\n", i))
		sum := sha256.Sum256(content)
		entries[i] = Entry{
			Position:       i,
			URI:            fmt.Sprintf("readproof://bench/docs/doc-%05d", i),
			SnapshotID:     gitBlobID(content),
			ContentHash:    "sha256:" + hex.EncodeToString(sum[:]),
			SourceRevision: "sha256:" + hex.EncodeToString(sum[:6]),
			ObservedAt:     time.Date(2026, 8, 20, 22, 42, 21, 0, time.UTC),
			ContentType:    "text/markdown",
			Bytes:          int64(size),
			Provenance:     map[string]string{"source_type": "filesystem", "path": fmt.Sprintf("/srv/docs/doc-%05d.md", i)},
			Content:        content,
		}
	}
	return Input{
		RunID:             "run-bench",
		ManifestID:        "0123456789abcdef0123456789abcdef01234567",
		ManifestCreatedAt: time.Date(2026, 8, 20, 22, 42, 21, 0, time.UTC),
		GeneratedAt:       time.Date(2026, 8, 20, 22, 42, 27, 0, time.UTC),
		Entries:           entries,
		WithContent:       true,
	}
}

// BenchmarkExportVerify10k builds, marshals and verifies offline a bundle of
// 10,000 entries with 4 KiB of content each (target: under 1 s per op).
func BenchmarkExportVerify10k(b *testing.B) {
	in := benchInput(10000, 4096)
	in.Replay = &ReplayResult{VerifiedAt: in.GeneratedAt}
	for _, e := range in.Entries {
		in.Replay.Entries = append(in.Replay.Entries, ReplayEntry{Position: e.Position, URI: e.URI, ContentHash: e.ContentHash})
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st, err := Build(in)
		if err != nil {
			b.Fatal(err)
		}
		data, err := Marshal(st)
		if err != nil {
			b.Fatal(err)
		}
		report, err := Verify(data, VerifyOptions{Offline: true})
		if err != nil {
			b.Fatal(err)
		}
		if !report.OK() {
			b.Fatalf("verify failed:\n%s", report.Listing())
		}
		b.SetBytes(int64(len(data)))
	}
}
