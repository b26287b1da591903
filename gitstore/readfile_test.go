package gitstore

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestReadFileSameAsOS: readFile (opened with O_NONBLOCK where that saves
// system calls) gives os.ReadFile's bytes and errors: files empty, small,
// at and past the first buffer, large; a missing file, a missing
// directory, a directory, and a path through a file.
func TestReadFileSameAsOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 4096, 1 << 20} {
		p := filepath.Join(dir, "f")
		data := bytes.Repeat([]byte{'x', 0, 0xff}, n/3+1)[:n]
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := readFile(p)
		if err != nil || !bytes.Equal(got, data) {
			t.Errorf("%d bytes: read %d bytes, %v", n, len(got), err)
		}
	}
	os.Mkdir(filepath.Join(dir, "d"), 0o700)
	for _, p := range []string{"missing", "no/such/dir", "d", "f/below"} {
		p = filepath.Join(dir, p)
		got, err := readFile(p)
		want, werr := os.ReadFile(p)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) || errors.Is(err, fs.ErrNotExist) != errors.Is(werr, fs.ErrNotExist) || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v; os.ReadFile %q, %v", p, got, err, want, werr)
		}
	}
}

// TestReadDirSameAsOS: readDir gives os.ReadDir's entries, in its order,
// and its errors.
func TestReadDirSameAsOS(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, n := range []string{"b", "a", "pack-2.idx", "pack-1.idx", "Z", "tmp_obj_1"} {
		os.WriteFile(filepath.Join(dir, n), nil, 0o600)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o700)
	for _, p := range []string{dir, filepath.Join(dir, "missing"), filepath.Join(dir, "a")} {
		got, err := readDir(p)
		want, werr := os.ReadDir(p)
		if (err == nil) != (werr == nil) || (err != nil && err.Error() != werr.Error()) || len(got) != len(want) {
			t.Fatalf("%s: %v, %v; os.ReadDir %v, %v", p, got, err, want, werr)
		}
		for i := range got {
			if got[i].Name() != want[i].Name() || got[i].IsDir() != want[i].IsDir() {
				t.Errorf("%s: entry %d %s, os.ReadDir %s", p, i, got[i].Name(), want[i].Name())
			}
		}
	}
}
