package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/internal/hint"
)

// errSourceSwapped: a file of a source repository read in place (a clone
// from a path) is not the regular file that was listed: a symbolic link,
// a special file or another file took its place between the look at it
// (lstat) and the open.
var errSourceSwapped = errors.New("not the regular file that was listed: a symbolic link or another file took its place")

// errSourceReplaced: the file errSourceSwapped names is a regular file,
// opened without following a link, but not the one listed: another file
// was renamed over it (a gc of the source rewrites an unchanged pack and its
// index under the same names). The copy lists the source again.
var errSourceReplaced = errors.New("another regular file was renamed over it")

// openSourceFile opens name, a path inside the source directory root, for
// reading, as the regular file want describes (root.Lstat(name), taken
// when the file was listed). The open goes through root, so no symbolic
// link can lead it out of the directory, and with O_NOFOLLOW (and
// O_NONBLOCK: a FIFO does not block it); then the opened file is checked
// with fstat: a regular file, and the same one (device and inode) as want.
// A link or another file swapped in after the lstat is refused with an
// error naming the path (errSourceSwapped), never read: a time-of-check to
// time-of-use race in a clone could otherwise read a file from anywhere
// this user can read.
func openSourceFile(root *os.Root, name string, want os.FileInfo) (*os.File, error) {
	path := filepath.Join(root.Name(), name)
	refuse := func(err error) error {
		return hint.With(fmt.Errorf("source file %s: %w", path, err),
			"the source repository changed while it was read, or holds a link where git keeps files; clone it again, or look at it with git fsck")
	}
	if want == nil || !want.Mode().IsRegular() {
		return nil, refuse(errSourceSwapped)
	}
	f, err := root.OpenFile(name, os.O_RDONLY|sourceOpenFlags, 0)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err // gone (a gc of the source): the caller fetches instead
		}
		// ELOOP from O_NOFOLLOW (a link swapped in), or a link leading
		// out of the directory
		return nil, refuse(fmt.Errorf("%w (%w)", errSourceSwapped, err))
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, refuse(errSourceSwapped)
	}
	if !os.SameFile(fi, want) {
		// a regular file renamed over the listed one: what git's repack
		// does to a pack it writes again under the same name
		f.Close()
		return nil, refuse(fmt.Errorf("%w (%w)", errSourceSwapped, errSourceReplaced))
	}
	return f, nil
}

// lstatSourceFile is root.Lstat(name) when name is a regular file (not a
// symbolic link), else nil.
func lstatSourceFile(root *os.Root, name string) os.FileInfo {
	fi, err := root.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	return fi
}
