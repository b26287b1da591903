package gitstore

import (
	"bytes"
	"compress/zlib"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A loose object smaller than storeBelow is written in zlib stored blocks,
// the bytes zlib's NoCompression writer gives, without the compressor; a
// larger one as before, at BestSpeed. Both read back the same through the
// store and through stock git.
func TestLooseObjectZlib(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	for _, size := range []int{0, 1, 300, storeBelow - 1, storeBelow, 5000} {
		data := []byte(strings.Repeat("readproof document line\n", size/24+1)[:size])
		id, err := s.PutBlob(data)
		if err != nil {
			t.Fatal(err)
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(filepath.Join(s.Path(), "objects", string(id)[:2], string(id)[2:]))
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		level := zlib.BestSpeed
		if size < storeBelow {
			level = zlib.NoCompression
		}
		var want bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&want, level)
		zw.Write([]byte("blob " + strconv.Itoa(size) + "\x00"))
		zw.Write(data)
		zw.Close()
		if !bytes.Equal(raw, want.Bytes()) {
			t.Fatalf("size %d: loose file is not the level %d zlib stream of the object", size, level)
		}
		got, err := s.Blob(id)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("size %d: Blob = %d bytes, %v", size, len(got), err)
		}
		if out := gitRaw(t, s.Path(), "cat-file", "blob", string(id)); !bytes.Equal(out, data) {
			t.Fatalf("size %d: git cat-file gives %d bytes", size, len(out))
		}
	}
}
