package store

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// IgnoreFile is the file in the store directory that keeps the store out of
// an enclosing git work tree: it holds the single pattern `*`, so `git add
// -A` in a project that holds the store stages nothing of it (the file
// ignores itself too). Stock git never reads it inside a repository
// directory, so it changes nothing for the store. See docs/store-format.md.
const IgnoreFile = ".gitignore"

const ignoreContent = "*\n"

// Ignored reports whether the store directory at path has its IgnoreFile
// with a line `*`.
func Ignored(path string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(path, IgnoreFile))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		if string(bytes.TrimSpace(line)) == "*" {
			return true, nil
		}
	}
	return false, nil
}

// EnsureIgnored writes the IgnoreFile into the store directory at path when
// it is missing (stores made before readproof wrote one), and reports
// whether it wrote it. An existing file without the `*` line is left alone
// and reported as an error with a hint: it is the user's.
func EnsureIgnored(path string) (added bool, err error) {
	ok, err := Ignored(path)
	if err != nil || ok {
		return false, err
	}
	name := filepath.Join(path, IgnoreFile)
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("%s exists without the line `*`: add that line so the enclosing git repository ignores the store", name)
	}
	if err != nil {
		return false, fmt.Errorf("write %s: %w", name, err)
	}
	if _, err = f.WriteString(ignoreContent); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(name)
		return false, fmt.Errorf("write %s: %w", name, err)
	}
	return true, nil
}
