package testproc

import (
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CopyLinkedExecutable replaces each hard link of the test binary (os.Executable) in
// the first directory on PATH with a copy of it. testscript.Main puts the
// commands a script runs there as hard links of the test binary (the root
// package's scripts start it some 1,400 times a run, as readproof), and a
// file the linker has just written starts about 10% slower (CPU) than a
// copy of the same bytes for as long as its pages stay cached as the linker
// wrote them (docs/startup.md, session 9: 0.6 ms a start here). Run calls
// it before the tests; anything it cannot do is left as it was.
func CopyLinkedExecutable() {
	exe, err := os.Executable()
	if err != nil {
		return
	}
	dir, _, _ := strings.Cut(os.Getenv("PATH"), string(os.PathListSeparator))
	if dir == "" {
		return
	}
	copyLinks(dir, exe)
}

// copyLinks replaces each file in dir that is the same file as exe (a hard
// link of it) with a copy, written beside it and renamed over it. It
// returns how many it replaced.
func copyLinks(dir, exe string) int {
	self, err := os.Stat(exe)
	if err != nil {
		return 0
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		if fi, err := os.Lstat(path); err != nil || !os.SameFile(fi, self) {
			continue
		}
		if copyOver(exe, path, self.Mode().Perm()) == nil {
			n++
		}
	}
	return n
}

// copyOver writes a copy of src beside dst and renames it over dst.
func copyOver(src, dst string, perm os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".copy*")
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	if err == nil {
		err = out.Chmod(perm)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(out.Name(), dst)
	}
	if err != nil {
		os.Remove(out.Name())
	}
	return err
}
