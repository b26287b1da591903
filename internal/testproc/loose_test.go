package testproc

import (
	"bytes"
	"compress/zlib"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestDamageLoose: the object's file keeps its name and inflates to the same object but for one byte of its content.
func TestDamageLoose(t *testing.T) {
	t.Parallel()
	gitDir := t.TempDir()
	const oid = "0123456789abcdef0123456789abcdef01234567"
	obj := []byte("blob 12\x00hello world\n")
	var buf bytes.Buffer
	zw := zlib.NewWriter(&buf)
	zw.Write(obj)
	zw.Close()
	path := filepath.Join(gitDir, "objects", oid[:2], oid[2:])
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o444); err != nil {
		t.Fatal(err)
	}
	if err := DamageLoose(gitDir, oid); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte("blob 12\x00hello worle\n"); !bytes.Equal(got, want) {
		t.Errorf("damaged object %q, want %q", got, want)
	}
	if err := DamageLoose(gitDir, "fedcba9876543210fedcba9876543210fedcba98"); err == nil {
		t.Error("damaging an object with no loose file: no error")
	}
}
