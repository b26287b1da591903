//go:build unix

package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Files the store only writes or syncs are opened with open(2) and handed
// to os.NewFile, not os.OpenFile: os.OpenFile tries to register every file
// with the runtime's poller, which a regular file or a directory refuses,
// four fcntl calls and one epoll_ctl wasted per open. Nothing is read
// from them, so nothing is lost for go test's record of the files a test
// reads (files read still go through os.Open and os.ReadFile).

// openNoPoll is os.OpenFile for a file the store writes itself.
func openNoPoll(name string, flag int, perm os.FileMode) (*os.File, error) {
	fd, err := openRetry(name, flag|syscall.O_CLOEXEC, uint32(perm.Perm()))
	if err != nil {
		return nil, &os.PathError{Op: "open", Path: name, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

func openRetry(name string, flag int, perm uint32) (int, error) {
	for {
		fd, err := syscall.Open(name, flag, perm)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

// fsyncPath opens name (a file or a directory) and fsyncs it, with the
// errors os.Open and File.Sync give.
func fsyncPath(name string) error {
	fd, err := openRetry(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "open", Path: name, Err: err}
	}
	for {
		err = syscall.Fsync(fd)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		err = &os.PathError{Op: "sync", Path: name, Err: err}
	}
	if cerr := syscall.Close(fd); err == nil && cerr != nil {
		err = &os.PathError{Op: "close", Path: name, Err: cerr}
	}
	return err
}

// renameFile is os.Rename for a file the store replaces (a ref from its
// lock, packed-refs, a new pack or index), without the lstat os.Rename makes
// of newname first to refuse renaming over a directory: rename(2) refuses
// that itself (EISDIR), reported as os.Rename reports it (EEXIST).
func renameFile(oldname, newname string) error {
	for {
		err := syscall.Rename(oldname, newname)
		switch err {
		case nil:
			return nil
		case syscall.EINTR:
			continue
		case syscall.EISDIR:
			err = syscall.EEXIST
		}
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
}

// openRead is os.Open for a file the store reads (an object, a ref, an
// index, a pack, packed-refs, the config). It is still os.OpenFile, so go
// test records the file as read, but with O_NONBLOCK, which a regular file
// ignores: the runtime then tries its poller once (one failed epoll_ctl)
// instead of also switching the descriptor to non-blocking and back (four
// fcntl calls). A FIFO planted in the store does not block the open.
func openRead(name string) (*os.File, error) {
	return os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
}

// openLoose is openRead of a loose object's file, which git writes as a
// regular file: a symbolic link in its place is not followed (O_NOFOLLOW)
// and is damage (ErrLooseLink), whatever it points to. Followed, a link to
// a file that states a size and fails its reads (a sysfs file) was a read
// the system refused, a check that could not run (exit 4), not the damage
// it is.
func openLoose(name string) (*os.File, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	// ELOOP: Linux, macOS; EMLINK: FreeBSD's O_NOFOLLOW
	if err != nil && (errors.Is(err, syscall.ELOOP) || errors.Is(err, syscall.EMLINK)) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: ErrLooseLink}
	}
	return f, err
}

// sourceOpenFlags are added to O_RDONLY to open a file of a source
// repository (openSourceFile): a symbolic link is not followed, a FIFO
// does not block the open.
const sourceOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// readFile is os.ReadFile through openRead.
func readFile(name string) ([]byte, error) {
	f, err := openRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readWhole(f)
}

// readDir is os.ReadDir (entries sorted by name, those read before an
// error returned with it, O_DIRECTORY) opened as openRead opens.
func readDir(name string) ([]os.DirEntry, error) {
	f, err := os.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_DIRECTORY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	dirs, err := f.ReadDir(-1)
	slices.SortFunc(dirs, func(a, b os.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return dirs, err
}

// ownedByMe reports whether fi (from Lstat or Stat) belongs to the
// effective user: git serves a repository another user owns only when
// safe.directory says so, so such a one is left to git.
func ownedByMe(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Geteuid()
}
