package gitstore

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestObjectNotRegularFile (session 26, revA): a loose object whose file is
// a Unix socket (which does not open: ENXIO, for root too), a FIFO or a
// character device (which open, and read as nothing: before revA a
// "corrupt object") was not read. Blob and BlobTo say what stands there,
// not a regular file, with a hint to look at it and put the object's file
// back, and keep the cause (ObjectNotRegular: a read the store refused,
// which store.CouldNotRead counts, exit 4); not ErrCorrupt, "run git fsck"
// or the hint about a damaged object, which the file's bytes were never
// read to show. CheckLooseObject (verify's loose-object check) does not
// call it damaged either.
func TestObjectNotRegularFile(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, says string
		mode       uint32
		dev        int
	}{
		{"socket", "the object's file is a socket, not a regular file, so the object could not be read", syscall.S_IFSOCK | 0o444, 0},
		{"FIFO", "not a regular file: it is a named pipe, so the object could not be read", syscall.S_IFIFO | 0o444, 0},
		{"device", "not a regular file: it is a character device, so the object could not be read", syscall.S_IFCHR | 0o444, 1<<8 | 3}, // /dev/null's numbers
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := looseWrites(NewTestStore(t))
			id, err := s.PutBlob([]byte("Products can be refunded within 30 days.\n"))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.(*repo).Sync(); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(s.Path(), "objects", string(id[:2]), string(id[2:]))
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := syscall.Mknod(path, c.mode, c.dev); err != nil {
				t.Skipf("mknod of a %s: %v", c.name, err)
			}
			if c.dev != 0 {
				// a file system mounted nodev refuses to open a device
				// (EACCES), which is a permission, not this test's case
				if f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0); err != nil {
					t.Skipf("open of a device: %v", err)
				} else {
					f.Close()
				}
			}
			// a store opened afresh: nothing of the blob is held from its write
			r, err := Open(s.Path())
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			_, blobErr := r.Blob(id)
			_, toErr := r.BlobTo(id, 1<<20, io.Discard)
			for name, err := range map[string]error{"Blob": blobErr, "BlobTo": toErr} {
				if err == nil {
					t.Fatalf("%s of an object that is a %s: no error", name, c.name)
				}
				msg, h := err.Error(), hint.Of(err)
				if !ObjectNotRegular(err) || errors.Is(err, ErrCorrupt) {
					t.Errorf("%s: %v: want ObjectNotRegular (could not read), not ErrCorrupt", name, err)
				}
				for _, want := range []string{"read object " + string(id), path, c.says} {
					if !strings.Contains(msg, want) {
						t.Errorf("%s: error %q does not say %q", name, msg, want)
					}
				}
				if strings.Contains(msg, "corrupt") || strings.Contains(msg, "fsck") {
					t.Errorf("%s: error %q calls the object damaged", name, msg)
				}
				if !strings.Contains(h, "which was not read") || !strings.Contains(h, "`ls -l`") || strings.Contains(h, "dmesg") || strings.Contains(h, "damaged") {
					t.Errorf("%s: hint %q, want one about what stands in the object's place", name, h)
				}
			}
			if err := CheckLooseObject(s.Path(), id); err == nil || errors.Is(err, ErrCorrupt) || !ObjectNotRegular(err) {
				t.Errorf("CheckLooseObject: %v, want a file that is not a regular file, not damage", err)
			}
		})
	}
}
