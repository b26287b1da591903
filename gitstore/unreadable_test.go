package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// TestPackThatLiesIsDamage: a .pack that is a symbolic link to a file that
// says it holds nothing and fails every read with EIO (/proc/self/mem)
// is damage, not a read the system could not complete: a pack is never
// shorter than its header and trailer, so it is refused from its size
// before any read. Without that, whoever can write the store turned a
// broken store (exit 3) into one that could not be checked (exit 4).
func TestPackThatLiesIsDamage(t *testing.T) {
	if _, err := os.Open("/proc/self/mem"); err != nil {
		t.Skip("no /proc/self/mem here:", err)
	}
	p := &packFile{name: "pack-1", openFile: func() (*os.File, error) { return os.Open("/proc/self/mem") }}
	err := p.openPack()
	if !errors.Is(err, errPackCorrupt) || Unreadable(err) {
		t.Fatalf("a pack of 0 bytes that fails its reads with EIO: %v, want it damaged", err)
	}
	if err := objectReadError("0123456789abcdef0123456789abcdef01234567", err); !errors.Is(err, ErrCorrupt) {
		t.Errorf("its object: %v, want ErrCorrupt", err)
	}
	if p.pack != nil {
		t.Error("the pack was kept open")
	}
}

// TestLooseObjectThatLiesIsDamage: a loose object's file that is a link to
// a file that says it holds nothing and fails its reads with EIO
// (/proc/self/mem) is damage, not a read the system could not complete:
// it read as the empty file it says it is, which holds no object; since
// session 31 the link is not followed (openLoose), and is damage itself.
func TestLooseObjectThatLiesIsDamage(t *testing.T) {
	if _, err := os.Open("/proc/self/mem"); err != nil {
		t.Skip("no /proc/self/mem here:", err)
	}
	path := filepath.Join(t.TempDir(), "5f9af5d189350bafd5e24feaa7fcc5b677f312")
	if err := os.Symlink("/proc/self/mem", path); err != nil {
		t.Fatal(err)
	}
	if raw, err := readLooseFile(path); Unreadable(err) || err == nil && len(raw) != 0 || err != nil && !errors.Is(err, ErrCorrupt) {
		t.Fatalf("a loose object's file of 0 bytes that fails its reads with EIO: %d bytes, %v (unreadable %v), want it damaged", len(raw), err, Unreadable(err))
	}
}
