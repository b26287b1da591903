package testproc

import (
	"os"
	"path/filepath"
	"testing"
)

func TestCopyTree(t *testing.T) {
	src := filepath.Join(t.TempDir(), "src")
	for _, d := range []string{"a/b", "c"} {
		if err := os.MkdirAll(filepath.Join(src, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]os.FileMode{"top": 0o644, "a/b/ro": 0o444, "c/x": 0o755}
	for name, mode := range files {
		if err := os.WriteFile(filepath.Join(src, name), []byte(name), mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("../top", filepath.Join(src, "a", "link")); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(t.TempDir(), "dst")
	if err := CopyTree(src, dst); err != nil {
		t.Fatal(err)
	}
	for name, mode := range files {
		fi, err := os.Stat(filepath.Join(dst, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", name, fi.Mode().Perm(), mode)
		}
		if data, _ := os.ReadFile(filepath.Join(dst, name)); string(data) != name {
			t.Errorf("%s: content %q", name, data)
		}
	}
	if link, err := os.Readlink(filepath.Join(dst, "a", "link")); err != nil || link != "../top" {
		t.Errorf("symlink: %q %v", link, err)
	}
	if err := CopyTree(src, dst); err == nil {
		t.Error("copy onto an existing directory succeeded")
	}
}

func TestLookPathBinary(t *testing.T) {
	shims, bin := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(shims, "tool"), []byte("#!/bin/sh\nexec real \"$@\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "tool"), []byte("\x7fELF not really"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", shims+string(os.PathListSeparator)+bin)
	if got, err := LookPathBinary("tool"); err != nil || got != filepath.Join(bin, "tool") {
		t.Errorf("LookPathBinary = %q, %v; want the program in %s, past the script", got, err, bin)
	}
	// only a script: exec.LookPath's answer
	t.Setenv("PATH", shims)
	if got, err := LookPathBinary("tool"); err != nil || got != filepath.Join(shims, "tool") {
		t.Errorf("LookPathBinary = %q, %v; want the script", got, err)
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := LookPathBinary("tool"); err == nil {
		t.Error("found a tool that is not on PATH")
	}
}
