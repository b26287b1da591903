package gitstore

import (
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

func zlibBytes(t testing.TB, b []byte) []byte {
	t.Helper()
	var z bytes.Buffer
	w := zlib.NewWriter(&z)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return z.Bytes()
}

// writeOnePack writes a pack holding the given raw entries (each a pack
// entry header and its compressed data) under the ids given, and its index.
func writeOnePack(t testing.TB, gitDir string, ids []plumbing.Hash, entries [][]byte) {
	t.Helper()
	var pack bytes.Buffer
	pack.WriteString("PACK")
	binary.Write(&pack, binary.BigEndian, uint32(2))
	binary.Write(&pack, binary.BigEndian, uint32(len(entries)))
	var idx []indexEntry
	for i, e := range entries {
		idx = append(idx, indexEntry{h: ids[i], off: uint64(pack.Len())})
		pack.Write(e)
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	dir := filepath.Join(gitDir, "objects", "pack")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(dir, "pack-"+plumbing.Hash(sum).String())
	if err := os.WriteFile(name+".pack", pack.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".idx", encodeIndex(idx, sum[:]), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBlobAtMostSizeFirst: BlobAtMost reads an object's size from its
// header and refuses one over the limit (ErrTooLarge) without inflating
// the content. The objects here state a size of 100 MiB and hold a few
// bytes: reading their content would fail as corrupt instead, so the
// ErrTooLarge proves the content was not read. A loose object, a packed
// blob and an OFS_DELTA whose delta states a 100 MiB result; a blob
// within the limit is returned.
func TestBlobAtMostSizeFirst(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, "--quiet", "--bare")
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	const claimed = 100 << 20
	const max = 64 << 20

	// loose: "blob 104857600\x00" then 5 bytes
	looseID := plumbing.NewHash(strings.Repeat("ab", 20))
	p := filepath.Join(dir, "objects", "ab", strings.Repeat("ab", 19))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, zlibBytes(t, []byte("blob 104857600\x00short")), 0o444); err != nil {
		t.Fatal(err)
	}

	// packed: a blob entry claiming 100 MiB, a small base, and a delta on
	// it claiming a 100 MiB result
	packedID := plumbing.NewHash(strings.Repeat("cd", 20))
	baseID := plumbing.NewHash(strings.Repeat("ce", 20))
	deltaID := plumbing.NewHash(strings.Repeat("cf", 20))
	blob := append(packHeader(plumbing.BlobObject, claimed), zlibBytes(t, []byte("short"))...)
	base := append(packHeader(plumbing.BlobObject, 4), zlibBytes(t, []byte("base"))...)
	deltaBody := []byte{4, 0x80, 0x80, 0x80, 0x32, 3, 'a', 'b', 'c'} // base 4, result 100 MiB, insert "abc"
	baseOff := 12 + len(blob)
	deltaOff := baseOff + len(base)
	back := deltaOff - baseOff // < 128: one byte
	delta := append(append(packHeader(plumbing.OFSDeltaObject, len(deltaBody)), byte(back)), zlibBytes(t, deltaBody)...)
	writeOnePack(t, dir, []plumbing.Hash{packedID, baseID, deltaID}, [][]byte{blob, base, delta})

	for what, id := range map[string]plumbing.Hash{"loose": looseID, "packed": packedID, "delta": deltaID} {
		_, err := r.BlobAtMost(OID(id.String()), max)
		if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "104857600 bytes") {
			t.Errorf("%s: BlobAtMost = %v, want ErrTooLarge naming 104857600 bytes", what, err)
		}
		if _, err := r.Blob(OID(id.String())); err == nil || errors.Is(err, ErrTooLarge) {
			t.Errorf("%s: Blob = %v, want the corrupt content reported", what, err)
		}
	}
	small, err := r.PutBlob([]byte("small enough"))
	if err != nil {
		t.Fatal(err)
	}
	if data, err := r.BlobAtMost(small, 11); !errors.Is(err, ErrTooLarge) || data != nil {
		t.Errorf("BlobAtMost of a buffered 12-byte blob with max 11 = %v, want ErrTooLarge", err)
	}
	if err := r.Sync(); err != nil {
		t.Fatal(err)
	}
	if data, err := r.BlobAtMost(small, 12); err != nil || string(data) != "small enough" {
		t.Errorf("BlobAtMost of a 12-byte blob with max 12 = %q, %v", data, err)
	}
	if _, err := r.BlobAtMost(small, 11); !errors.Is(err, ErrTooLarge) {
		t.Errorf("BlobAtMost of a 12-byte blob with max 11 = %v, want ErrTooLarge", err)
	}
}
