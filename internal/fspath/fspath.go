// Package fspath holds the path checks that decide what lies inside what:
// Resolve (symbolic links resolved in the longest existing prefix, so a path
// that does not exist yet is judged by where it would land), EvalSymlinks
// and Within. Key files (internal/keyfile) and the filesystem source
// (adapters) use them. OpenRegular opens a file that must be a regular
// file (the policy file, an evidence bundle) and judges it from the file
// opened, never waiting at a named pipe.
//
// fspath imports only the standard library.
package fspath

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Resolve makes p absolute and resolves symbolic links in its longest
// existing prefix, appending the missing rest as written, so a path that does
// not exist yet is judged by where it would land. A dangling link in the
// path is followed to where it points, so it lands where the file would be
// if it existed (not on the link itself).
func Resolve(p string) (string, error) {
	if err := loops(p); err != nil {
		return "", err
	}
	return resolve(p, 0)
}

// EvalSymlinks is filepath.EvalSymlinks, except that a path the kernel
// will not resolve for too many links (a loop, or more than its limit,
// 40 on Linux) fails at once with ELOOP. filepath.EvalSymlinks follows
// up to 255 links before it gives up, each one a walk of the path (an
// lstat a component): some 1,500 lstat calls for a two-link loop, against
// the one stat this adds to every call.
func EvalSymlinks(p string) (string, error) {
	if err := loops(p); err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(p)
}

// loops returns the error of a stat of p when it is ELOOP (too many links
// to follow), else nil. Nothing can be opened through such a path.
func loops(p string) error {
	if _, err := os.Stat(p); errors.Is(err, syscall.ELOOP) {
		return err
	}
	return nil
}

// maxLinks bounds the dangling links Resolve follows (as the kernel's
// ELOOP limit does).
const maxLinks = 40

func resolve(p string, links int) (string, error) {
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
		if fi, lerr := os.Lstat(head); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(head)
			if err != nil {
				return "", err
			}
			if links >= maxLinks {
				return "", &fs.PathError{Op: "resolve", Path: p, Err: syscall.ELOOP}
			}
			if !filepath.IsAbs(target) {
				target = filepath.Join(filepath.Dir(head), target)
			}
			return resolve(filepath.Join(target, tail), links+1)
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

// DescribeMode names, with its article, the type of a file that is not a
// regular file ("a directory", "a named pipe", "a character device"), for a
// message that refuses it.
func DescribeMode(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	}
	return "a special file (" + m.String() + ")"
}
