package keyfile

import (
	"errors"
	"io/fs"
	"strings"
	"syscall"
	"testing"
)

// TestWriteHintNamesTheCause: a key that could not be written gets a hint
// for what stopped it. Every failed write said to free space on the file
// system ("df shows it"), for a directory this user may not write and a
// read-only file system too.
func TestWriteHintNamesTheCause(t *testing.T) {
	k := Kind{Name: "signing key"}
	for _, c := range []struct {
		errno     syscall.Errno
		want, not string
	}{
		{syscall.ENOSPC, "free space", "permission"},
		{syscall.EACCES, "permission denied", "free space"},
		{syscall.EPERM, "permission denied", "free space"},
		{syscall.EROFS, "read-only", "free space"},
	} {
		err := k.writeFailed("/k/key", &fs.PathError{Op: "open", Path: "/k/.readproof-key-1", Err: c.errno}, "")
		if !errors.Is(err, ErrWrite) || !errors.Is(err, c.errno) {
			t.Errorf("%v: the error %q should wrap ErrWrite and the errno", c.errno, err)
		}
		var h interface{ Hint() string }
		if !errors.As(err, &h) {
			t.Fatalf("%v: no hint on %q", c.errno, err)
		}
		if got := h.Hint(); !strings.HasPrefix(got, "nothing was written at the key's path: ") || !strings.Contains(got, c.want) || strings.Contains(got, c.not) {
			t.Errorf("%v: hint %q, want one that says nothing was written and %q, not %q", c.errno, got, c.want, c.not)
		}
	}
}
