package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestUnreadableIsNotCorrupt: an object read that the system refused or
// could not complete (the limit on open files met opening its pack, an
// I/O error) keeps its cause and is not ErrCorrupt, which verify reports
// as damage (exit 3): nothing was learnt of the object. Any other error
// of a read is still damage.
func TestUnreadableIsNotCorrupt(t *testing.T) {
	const id = OID("0123456789abcdef0123456789abcdef01234567")
	for _, errno := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.EIO, syscall.ENOMEM, syscall.ESTALE} {
		cause := &fs.PathError{Op: "open", Path: "/s/objects/pack/pack-1.pack", Err: errno}
		err := objectReadError(id, fmt.Errorf("pack-1.pack: read its header: %w", cause))
		if errors.Is(err, ErrCorrupt) || !errors.Is(err, errno) || !Unreadable(err) {
			t.Errorf("%v: %v (corrupt %v, unreadable %v)", errno, err, errors.Is(err, ErrCorrupt), Unreadable(err))
		}
		if strings.Contains(err.Error(), "fsck") || !strings.Contains(err.Error(), "could not be read") {
			t.Errorf("%v: %q blames the object", errno, err)
		}
	}
	err := objectReadError(id, fmt.Errorf("pack-1.pack: %w: bad header", errPackCorrupt))
	if !errors.Is(err, ErrCorrupt) || Unreadable(err) {
		t.Errorf("a bad header: %v, want ErrCorrupt", err)
	}
	if Unreadable(nil) || Unreadable(ErrNotFound) || Unreadable(fmt.Errorf("x: %w", ErrCorrupt)) {
		t.Error("a miss or damage read as Unreadable")
	}
}
