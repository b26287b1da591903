package testproc

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestCopyLinks: a hard link of the executable becomes a copy with the same
// bytes and mode, no longer the same file; other files, a symlink to the
// executable and a file of the same content are left alone.
func TestCopyLinks(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("hard links and modes differ on Windows")
	}
	dir := t.TempDir()
	exe := filepath.Join(t.TempDir(), "prog.test")
	content := bytes.Repeat([]byte("binary "), 10000)
	if err := os.WriteFile(exe, content, 0o751); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(exe, filepath.Join(dir, "readproof")); err != nil {
		t.Skipf("no hard links here: %v", err)
	}
	if err := os.Symlink(exe, filepath.Join(dir, "viasymlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other"), content, 0o755); err != nil {
		t.Fatal(err)
	}
	other, _ := os.Stat(filepath.Join(dir, "other"))

	if n := copyLinks(dir, exe); n != 1 {
		t.Fatalf("copyLinks replaced %d files, want 1", n)
	}
	self, _ := os.Stat(exe)
	got, err := os.Stat(filepath.Join(dir, "readproof"))
	if err != nil {
		t.Fatal(err)
	}
	if os.SameFile(got, self) {
		t.Error("readproof is still a hard link of the executable")
	}
	if got.Mode().Perm() != 0o751 {
		t.Errorf("copy's mode %v, want %v", got.Mode().Perm(), os.FileMode(0o751))
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "readproof")); !bytes.Equal(data, content) {
		t.Error("the copy's bytes differ from the executable's")
	}
	if fi, err := os.Lstat(filepath.Join(dir, "viasymlink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the symlink was replaced: %v %v", fi, err)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "other")); !os.SameFile(fi, other) {
		t.Error("a file that is not the executable was replaced")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 3 {
		t.Errorf("dir holds %d entries after the copy, want 3 (a temporary file left?)", len(entries))
	}
	// Nothing left to replace the second time.
	if n := copyLinks(dir, exe); n != 0 {
		t.Errorf("second copyLinks replaced %d files, want 0", n)
	}
}
