package gitstore

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkSnapshotHash compares the two ways of hashing a snapshot that a
// pull verifies: Blob, then SHA-256 of the bytes (before session 24), and
// BlobTo into the SHA-256 (since), for 1,000 blobs of 4 KiB (a tag move's
// typical document), loose and packed, and one of 8 MiB.
func BenchmarkSnapshotHash(b *testing.B) {
	for _, c := range []struct {
		name    string
		n, size int
		packed  bool
	}{
		{"1000x4KiB/loose", 1000, 4 << 10, false},
		{"1000x4KiB/packed", 1000, 4 << 10, true},
		{"1x8MiB/packed", 1, 8 << 20, true},
	} {
		dir := filepath.Join(b.TempDir(), "r.git")
		gitInit(b, dir, "--quiet", "--bare")
		contents := make([]string, c.n)
		for i := range contents {
			v := versions(1, c.size)[0]
			contents[i] = fmt.Sprintf("%d\n", i) + v
		}
		ids := gitHashObjects(b, dir, contents)
		if c.packed {
			for i, id := range ids {
				git(b, dir, "update-ref", fmt.Sprintf("refs/tags/b%d", i), string(id))
			}
			git(b, dir, "repack", "-adq")
		}
		s, err := Open(dir)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/Blob", func(b *testing.B) {
			for b.Loop() {
				for _, id := range ids {
					data, err := s.Blob(id)
					if err != nil {
						b.Fatal(err)
					}
					sha256.Sum256(data)
				}
			}
		})
		b.Run(c.name+"/BlobTo", func(b *testing.B) {
			h := sha256.New()
			for b.Loop() {
				for _, id := range ids {
					h.Reset()
					if _, err := s.BlobTo(id, -1, h); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		s.Close()
	}
}
