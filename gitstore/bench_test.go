package gitstore

import (
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func benchStore(b *testing.B) *repo {
	b.Helper()
	s, err := Init(filepath.Join(b.TempDir(), "store"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s.(*repo)
}

// writePackedRefs writes n refs named prefix+%06d straight into packed-refs,
// as git pack-refs would (sorted, with the standard header).
func writePackedRefs(b *testing.B, s *repo, prefix string, n int, id OID) string {
	b.Helper()
	var sb strings.Builder
	sb.WriteString("# pack-refs with: peeled fully-peeled sorted \n")
	last := ""
	for i := 0; i < n; i++ {
		last = fmt.Sprintf("%s%06d", prefix, i)
		sb.WriteString(string(id) + " " + last + "\n")
	}
	if err := os.WriteFile(filepath.Join(s.path, "packed-refs"), []byte(sb.String()), 0o666); err != nil {
		b.Fatal(err)
	}
	return last
}

func BenchmarkPutBlob4KiB(b *testing.B) {
	s := benchStore(b)
	data := make([]byte, 4096)
	for i := range data {
		data[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		binary.LittleEndian.PutUint64(data, uint64(i))
		if _, err := s.PutBlob(data); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if err := s.Sync(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkUpdateOneRef moves one ref back and forth by compare-and-swap,
// each Update including its syncs, on an empty store and beside 10,000
// other refs, packed or loose.
func BenchmarkUpdateOneRef(b *testing.B) {
	for _, setup := range []string{"empty", "10k-packed", "10k-loose"} {
		b.Run(setup, func(b *testing.B) {
			s := benchStore(b)
			c1 := mkCommit(b, s, "one")
			c2 := mkCommit(b, s, "two", c1)
			switch setup {
			case "10k-packed":
				writePackedRefs(b, s, "refs/tags/readproof/runs/run-", 10000, c1)
			case "10k-loose":
				var ups []RefUpdate
				for i := 0; i < 10000; i++ {
					ups = append(ups, RefUpdate{Name: fmt.Sprintf("refs/tags/readproof/runs/run-%06d", i), New: c1})
				}
				mustUpdate(b, s, ups...)
			}
			const ref = "refs/heads/readproof/open/bench"
			mustUpdate(b, s, RefUpdate{Name: ref, New: c1})
			cur, next := c1, c2
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if err := s.Update(RefUpdate{Name: ref, Old: cur, New: next}); err != nil {
					b.Fatal(err)
				}
				cur, next = next, cur
			}
		})
	}
}

// BenchmarkUpdate1000Refs creates 1,000 refs in one Update, as a run that
// records 1,000 resource observations does.
func BenchmarkUpdate1000Refs(b *testing.B) {
	s := benchStore(b)
	c := mkCommit(b, s, "c")
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ups := make([]RefUpdate, 1000)
		for j := range ups {
			ups[j] = RefUpdate{Name: fmt.Sprintf("refs/heads/readproof/resources/r%d+doc%04d.md", i, j), New: c}
		}
		if err := s.Update(ups...); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRefLookupPacked10k(b *testing.B) {
	s := benchStore(b)
	c := mkCommit(b, s, "c")
	last := writePackedRefs(b, s, "refs/tags/readproof/runs/run-", 10000, c)
	b.Run("last", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if id, err := s.Ref(last); err != nil || id != c {
				b.Fatal(id, err)
			}
		}
	})
	b.Run("missing", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, err := s.Ref("refs/tags/readproof/runs/zzz"); err == nil {
				b.Fatal("found a missing ref")
			}
		}
	})
	// A process that looks up one ref once pays for reading the file.
	b.Run("first-lookup", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s.pmu.Lock()
			s.packed = nil
			s.pmu.Unlock()
			if _, err := s.Ref(last); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkRefs lists 1,000 loose refs under one prefix, 10,000 packed
// refs, and 100 refs of a prefix among 10,000 packed ones.
func BenchmarkRefs(b *testing.B) {
	s := benchStore(b)
	c := mkCommit(b, s, "c")
	writePackedRefs(b, s, "refs/tags/readproof/runs/run-", 10000, c)
	var ups []RefUpdate
	for i := 0; i < 1000; i++ {
		ups = append(ups, RefUpdate{Name: fmt.Sprintf("refs/heads/readproof/resources/docs+%04d.md", i), New: c})
	}
	mustUpdate(b, s, ups...)
	b.Run("loose-1000", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if refs, err := s.Refs("refs/heads/readproof/resources/"); err != nil || len(refs) != 1000 {
				b.Fatal(len(refs), err)
			}
		}
	})
	// a pull at 10^5 runs lists every run ref of both sides this way
	b.Run("packed-10k", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if refs, err := s.Refs("refs/tags/readproof/runs/"); err != nil || len(refs) != 10000 {
				b.Fatal(len(refs), err)
			}
		}
	})
	b.Run("packed-100-of-10k", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if refs, err := s.Refs("refs/tags/readproof/runs/run-0099"); err != nil || len(refs) != 100 {
				b.Fatal(len(refs), err)
			}
		}
	})
}

// BenchmarkRun1000Docs is the store's share of a 1,000-document run: 1,000
// content blobs of 4 KiB, an observation blob, tree and commit per document
// (about 4,000 objects), a manifest tree and commit, then 1,000 resource refs
// and the run ref in two Update calls.
func BenchmarkRun1000Docs(b *testing.B) {
	s := benchStore(b)
	content := make([]byte, 4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var manifest []TreeEntry
		ups := make([]RefUpdate, 0, 1000)
		for d := 0; d < 1000; d++ {
			binary.LittleEndian.PutUint64(content, uint64(i*1000+d))
			blob, err := s.PutBlob(content)
			if err != nil {
				b.Fatal(err)
			}
			obs, err := s.PutBlob([]byte(fmt.Sprintf(`{"run":%d,"doc":%d,"snapshot":"%s"}`, i, d, blob)))
			if err != nil {
				b.Fatal(err)
			}
			tree, err := s.PutTree([]TreeEntry{{Name: "observation.json", Mode: ModeFile, OID: obs}})
			if err != nil {
				b.Fatal(err)
			}
			c, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "observe\n"})
			if err != nil {
				b.Fatal(err)
			}
			name := fmt.Sprintf("doc%04d.md", d)
			manifest = append(manifest, TreeEntry{Name: name, Mode: ModeFile, OID: blob})
			ups = append(ups, RefUpdate{Name: fmt.Sprintf("refs/heads/readproof/resources/run%d+%s", i, name), New: c})
		}
		mt, err := s.PutTree(manifest)
		if err != nil {
			b.Fatal(err)
		}
		mc, err := s.PutCommit(Commit{Tree: mt, Author: testSig(), Committer: testSig(), Message: "manifest\n"})
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Update(ups...); err != nil {
			b.Fatal(err)
		}
		if err := s.Update(RefUpdate{Name: fmt.Sprintf("refs/tags/readproof/runs/run-%d", i), New: mc}); err != nil {
			b.Fatal(err)
		}
	}
}
