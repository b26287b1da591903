package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestReadBundle reads files of several sizes and stdin into exactly their
// bytes (the file path reads into one buffer of the file's size).
func TestReadBundle(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 4096, 1 << 20} {
		want := bytes.Repeat([]byte("0123456789abcdef"), n/16+1)[:n]
		path := filepath.Join(dir, "b.json")
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := readBundle(nil, path)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
		got, err = readBundle(bytes.NewReader(want), "-")
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("stdin, %d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
	// A regular file whose size says less than it holds (as a file that
	// grows after its stat does) is read to its end: /proc's files say 0.
	if runtime.GOOS == "linux" {
		got, err := readBundle(nil, "/proc/self/status")
		if err != nil || !bytes.Contains(got, []byte("\nVmPeak:")) {
			t.Fatalf("/proc/self/status: got %q, %v", got, err)
		}
	}
	if _, err := readBundle(nil, filepath.Join(dir, "missing.json")); err == nil || !strings.Contains(err.Error(), "read bundle") {
		t.Fatalf("missing file: %v", err)
	}
}
