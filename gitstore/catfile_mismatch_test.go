package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGitReaderRefusesMismatchedContent: the guard's cat-file reader
// refuses a blob whose content does not hash to the id it was asked for (a
// loose object file replaced by another blob's bytes: git cat-file serves
// it without checking), and says the store is damaged, writing no more
// than it read.
func TestGitReaderRefusesMismatchedContent(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	id, err := s.PutBlob([]byte("the recorded content\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(s.Path(), "objects", string(id)[:2], string(id)[2:])
	if _, err := os.Stat(path); err != nil {
		t.Skipf("the blob is not loose here: %v", err)
	}
	other := []byte("other content, same object file\n")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	fmt.Fprintf(zw, "blob %d\x00", len(other))
	zw.Write(other)
	zw.Close()
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, z.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	r, err := OpenGitReader(context.Background(), s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var buf bytes.Buffer
	if _, err := r.BlobTo(id, -1, &buf); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("BlobTo of a loose object holding another blob's bytes: %v, want ErrCorrupt", err)
	}
}
