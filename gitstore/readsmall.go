package gitstore

import (
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"

	"github.com/readproof/readproof/internal/fspath"
)

// maxRefFile bounds what is read of a loose ref file (or HEAD): a ref is
// 41 bytes, a symbolic ref "ref: " and a name. A ref path that is a
// symbolic link to /dev/zero, a FIFO or a huge file is refused rather than
// read to its end (git itself would read /dev/zero until memory runs out).
const maxRefFile = 4 << 10

// errNotSmallFile is what readSmallFile returns for a file it refuses:
// not a regular file, or larger than its bound.
var errNotSmallFile = errors.New("not a regular file of a ref's size")

// readSmallFile reads name, following symbolic links, when it is a regular
// file of at most max bytes. Anything else (a device, a FIFO, a socket, a
// larger file) is refused with an error wrapping errNotSmallFile, without
// blocking on a FIFO and without reading more than max+1 bytes.
func readSmallFile(name string, max int64) ([]byte, error) {
	f, err := openRead(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &os.PathError{Op: "read", Path: name, Err: syscall.EISDIR} // as read(2) says
	}
	if err := notSmallFile(name, fi, max); err != nil {
		return nil, err
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, &os.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: more than %d bytes (it grew while read)", errNotSmallFile, max)}
	}
	return data, nil
}

// notSmallFile is the error, wrapping errNotSmallFile, for a file name (fi
// its stat, not a directory) that is not a regular file of at most max
// bytes; nil for one that is.
func notSmallFile(name string, fi os.FileInfo, max int64) error {
	if !fi.Mode().IsRegular() {
		return &os.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: it is %s", errNotSmallFile, fspath.DescribeMode(fi.Mode()))}
	}
	if fi.Size() > max {
		return &os.PathError{Op: "read", Path: name, Err: fmt.Errorf("%w: %d bytes, more than %d", errNotSmallFile, fi.Size(), max)}
	}
	return nil
}
