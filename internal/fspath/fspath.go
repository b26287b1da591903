// Package fspath holds the path checks that decide what lies inside what:
// Resolve (symbolic links resolved in the longest existing prefix, so a path
// that does not exist yet is judged by where it would land) and Within. Key
// files (internal/keyfile) and the filesystem source (adapters) use them.
//
// fspath imports only the standard library.
package fspath

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
)

// Resolve makes p absolute and resolves symbolic links in its longest
// existing prefix, appending the missing rest as written, so a path that does
// not exist yet is judged by where it would land.
func Resolve(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	head, tail := abs, ""
	for {
		r, err := filepath.EvalSymlinks(head)
		if err == nil {
			return filepath.Join(r, tail), nil
		}
		if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, syscall.ENOTDIR) {
			return "", err
		}
		parent := filepath.Dir(head)
		if parent == head {
			return abs, nil
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
}

// Within reports whether p is dir or lies below it; both are absolute and
// cleaned.
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}
