package fspath

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// ErrNotRegular is matched (errors.Is) by the *KindError of OpenRegular.
var ErrNotRegular = errors.New("not a regular file")

// KindError is a file OpenRegular refused for its type: Path, as given,
// names Mode's type (a named pipe, a device, a directory, a socket).
type KindError struct {
	Path string
	Mode fs.FileMode
}

func (e *KindError) Error() string {
	return e.Path + " is " + DescribeMode(e.Mode) + ", not a regular file"
}

// Is lets errors.Is match ErrNotRegular.
func (e *KindError) Is(target error) bool { return target == ErrNotRegular }

// OpenRegular opens the file at path for reading, and judges what it is
// from the open file itself (fstat), not from a look at the path before
// the open that the path could change after: a regular file, the null
// device (read as an empty file) and a pipe this process was handed (a
// /dev/fd or /proc/self/fd entry: --config /dev/stdin, a shell's <(...))
// are returned open, with their FileInfo; anything else (a named pipe in a
// directory, a device such as /dev/zero, a directory, a socket) is closed
// again and refused with a *KindError. The open does not wait for a writer
// of a named pipe (O_NONBLOCK, where the platform has it; a regular file
// ignores it), and a pipe or device returned is in blocking mode again, for
// reads that wait for a handed pipe's writer as any read does. A regular
// file under another process's lease, which makes an O_NONBLOCK open fail
// with EWOULDBLOCK on Linux (Samba's oplocks, the kernel NFS server's
// delegations), is opened again in blocking mode, once judged a regular
// file from a descriptor of its own (openLeased).
func OpenRegular(path string) (*os.File, fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		// a regular file under another process's lease (Samba, the
		// kernel NFS server): opened again, waiting for the lease
		f, err = openLeased(path, err)
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if m := fi.Mode(); !m.IsRegular() && !isNull(fi) && (m&fs.ModeNamedPipe == 0 || !handedPipe(f, path)) {
		f.Close()
		return nil, nil, &KindError{Path: path, Mode: m}
	}
	// a regular file ignores O_NONBLOCK: only a pipe or a device is put
	// back in blocking mode (one fcntl fewer on every policy read)
	if !fi.Mode().IsRegular() {
		if err := setBlocking(f); err != nil {
			f.Close()
			return nil, nil, err
		}
	}
	return f, fi, nil
}

// isNull reports whether fi is the null device's.
func isNull(fi fs.FileInfo) bool {
	if fi.Mode()&fs.ModeDevice == 0 {
		return false
	}
	null, err := os.Stat(os.DevNull)
	return err == nil && os.SameFile(fi, null)
}

// handedPath says whether path, opened as a pipe, names one of this
// process's descriptors and not a named pipe in a directory: its links
// lead to an anonymous pipe ("pipe:[N]", Linux's /proc/self/fd), or it is
// a /dev/fd entry that is not a link (macOS, the BSDs). On Linux a named
// pipe reached through a descriptor (/dev/fd/3 opened on one) ends at the
// named pipe's path and is refused; on macOS and the BSDs /dev/fd/N is
// judged by its path alone, so a named pipe reached that way is read as a
// handed pipe (the user named the descriptor). It is the judge where the
// open descriptor itself cannot be asked (handedPipe).
func handedPath(path string) bool {
	for range 40 {
		to, err := os.Readlink(path)
		if err != nil {
			return strings.HasPrefix(path, "/dev/fd/")
		}
		if strings.HasPrefix(to, "pipe:[") {
			return true
		}
		if !filepath.IsAbs(to) {
			to = filepath.Join(filepath.Dir(path), to)
		}
		path = to
	}
	return false
}

// ReadRegular reads the file at path, opened as OpenRegular opens it, to
// its end: a regular file or a pipe handed to this process of at most max
// bytes. what names such a file in the errors ("a file of public keys").
// What OpenRegular refuses (a named pipe, a device such as /dev/zero) and
// a regular file over max are refused before anything is read from them;
// a pipe is read to max and no further. The errors start "it is" or "it
// holds", for a caller that names the file before them.
func ReadRegular(path string, max int64, what string) ([]byte, error) {
	f, fi, err := OpenRegular(path)
	var ke *KindError
	if errors.As(err, &ke) {
		return nil, fmt.Errorf("it is %s, not a regular file; nothing was read from it", DescribeMode(ke.Mode))
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Mode().IsRegular() && fi.Size() > max {
		return nil, fmt.Errorf("it is %d bytes, more than the %d MiB %s may be; nothing was read from it", fi.Size(), max>>20, what)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err == nil && int64(len(data)) > max {
		err = fmt.Errorf("it holds more than the %d MiB %s may be", max>>20, what)
	}
	return data, err
}
