package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"github.com/readproof/readproof/internal/fspath"
	"github.com/readproof/readproof/internal/hint"
)

// ErrObjectNotRegular is what a read of a loose object whose file opened
// but is not a regular file (a FIFO, a device) gives: its bytes are not the
// object's, and were not read. A socket does not open (ENXIO);
// ObjectNotRegular reports either.
var ErrObjectNotRegular = errors.New("not a regular file")

// ErrLooseLink is the open of a loose object whose file is a symbolic
// link (openLoose): git never writes one for an object, so it is damage
// (errors.Is ErrCorrupt), whatever it points to, and is not followed.
var ErrLooseLink error = looseLinkError{}

type looseLinkError struct{}

func (looseLinkError) Error() string {
	return "a symbolic link where git writes the object's file, not followed: damage"
}

func (looseLinkError) Is(target error) bool { return target == ErrCorrupt }

// ObjectNotRegular reports whether err is a read of an object whose file
// is not a regular file: a socket or a device with no driver, which does
// not open (ENXIO), or a FIFO or a device, which does (ErrObjectNotRegular).
// The object was not read: this says nothing of it.
func ObjectNotRegular(err error) bool {
	return errors.Is(err, ErrObjectNotRegular) || errors.Is(err, syscall.ENXIO)
}

// readLooseFile is readFile of a loose object's file, refusing one that
// is not a regular file (ErrObjectNotRegular) rather than reading what a
// FIFO or a device gives (nothing, or bytes that are not the object's) as
// a damaged object. readFile makes the same fstat.
func readLooseFile(path string) ([]byte, error) {
	f, err := openLoose(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, &fs.PathError{Op: "read", Path: path, Err: ErrObjectNotRegular}
	}
	if fi.Size() == 0 {
		// nothing to read, whatever a read would give (a link to
		// /proc/self/mem fails with EIO): an empty object file, damage
		return nil, nil
	}
	return readWholeSized(f, fi.Size())
}

// Unreadable reports whether err is a read the system refused or could
// not complete, whatever the bytes it was to read: permission denied, an
// I/O error, this process's or the system's limit on open files met
// (EMFILE, ENFILE), memory, a stale NFS handle, or an object's file that
// is not a regular file (ObjectNotRegular). Nothing was learnt of what was
// to be read, so such an error is never damage: a check that meets it
// could not run (verify's could-not-check, exit 4), and an object read
// that meets it is not ErrCorrupt (objectReadError). A missing object, or
// one that does not inflate, decode or hash to its id, is not Unreadable.
func Unreadable(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{fs.ErrPermission, syscall.EIO, syscall.EMFILE, syscall.ENFILE, syscall.ENOMEM, syscall.ESTALE} {
		if errors.Is(err, e) {
			return true
		}
	}
	return ObjectNotRegular(err)
}

// objectReadError is the error of a read of object id that failed with err,
// neither a miss nor a permission. An object whose file is not a regular
// file (ObjectNotRegular: a socket, a FIFO or a device where the object's
// file should be) was not read, so the error says what stands there and
// keeps its cause (a read the store refused, store.CouldNotRead, exit 4),
// not ErrCorrupt, which is damage git fsck would name. Nor is any other
// read the system refused or could not complete (Unreadable: a pack file
// that did not open for the limit on open files, an I/O error): the error
// keeps its cause and says that the object was not read. Any other error
// is damage.
func objectReadError(id OID, err error) error {
	if ObjectNotRegular(err) {
		what := ""
		var pe *fs.PathError
		if errors.As(err, &pe) {
			if fi, lerr := os.Lstat(pe.Path); lerr == nil && !fi.Mode().IsRegular() {
				what = fspath.DescribeMode(fi.Mode())
			}
		}
		switch {
		case errors.Is(err, ErrObjectNotRegular) && what != "":
			// the error says "not a regular file" already
			err = fmt.Errorf("%w: it is %s", err, what)
		case errors.Is(err, ErrObjectNotRegular):
		case what != "":
			err = fmt.Errorf("%w: the object's file is %s, not a regular file", err, what)
		default:
			err = fmt.Errorf("%w: the object's file is not a regular file", err)
		}
		return hint.With(fmt.Errorf("read object %s: %w, so the object could not be read", id, err), notRegularObjectHint)
	}
	if Unreadable(err) {
		// hint.Of names the limit on open files when that is the cause
		return hint.With(fmt.Errorf("read object %s: %w, so the object could not be read", id, err), unreadableObjectHint)
	}
	return hint.With(fmt.Errorf("read object %s: %w: %w: run git fsck on the store", id, ErrCorrupt, err), damagedObjectHint)
}

// unreadableObjectHint is the hint of an object the system would not let
// read (Unreadable, objectReadError).
const unreadableObjectHint = "this says nothing of the object, which was not read: the system failed to read the store's file named above (dmesg may say why); once it reads, run the command again"

// notRegularObjectHint is the hint of an object whose file is not a regular
// file (objectReadError).
const notRegularObjectHint = "this says nothing of the object, which was not read: `ls -l` of the path above shows what stands there; remove it and restore the object's file from a clone (readproof pull) or a backup"
