package policy

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/readproof/readproof/internal/fspath"
)

// MaxFileBytes bounds the size of a policy file: 16 MiB, some 150,000
// resources as resource add writes them, fifteen times the largest policy
// measured (docs/scaling.md). A larger file is refused before any of it
// is parsed: a parse holds the file's text and its resources, some 18
// times its size at worst (a 73 MB file took 29 s and 1.3 GB).
const MaxFileBytes = 16 << 20

// Open opens the policy file at path for reading; every reader of a
// policy file (Load, LoadCached, AppendResource, the commands' checks)
// opens it here. What the path names is judged from the open file
// (fspath.OpenRegular): a named pipe, a device other than the null device,
// a directory is refused with a *fspath.KindError, without waiting at the
// open or reading from it; a regular file larger than MaxFileBytes is
// refused with an *Error naming the bound. A missing file is an error
// matching fs.ErrNotExist.
func Open(path string) (*os.File, fs.FileInfo, error) {
	f, fi, err := fspath.OpenRegular(path)
	if err != nil {
		return nil, nil, err
	}
	if fi.Mode().IsRegular() && fi.Size() > MaxFileBytes {
		f.Close()
		return nil, nil, tooLarge(path, fi.Size())
	}
	return f, fi, nil
}

// Check opens the policy file at path as Open does and closes it: the
// error a command reading it would meet, for a command that must refuse
// it before anything else.
func Check(path string) error {
	f, _, err := Open(path)
	if err != nil {
		return err
	}
	return f.Close()
}

// tooLarge is the error of a policy file over MaxFileBytes; size is -1
// when it is not known (a pipe, read to the bound).
func tooLarge(path string, size int64) error {
	name := path
	if name == "" {
		name = DefaultFileName
	}
	is := "more than"
	if size >= 0 {
		is = fmt.Sprintf("%d bytes, more than", size)
	}
	return &Error{File: name,
		Msg:  fmt.Sprintf("the policy file is %s %d MiB, the most a policy file may be; nothing of it was read", is, MaxFileBytes>>20),
		Hint: fmt.Sprintf("a policy file holds at most %d MiB (some 150,000 resources): check that %s is the policy file meant, or split its resources among projects, each with its own readproof.toml and store", MaxFileBytes>>20, name)}
}

// readFrom reads the policy file f, opened at path as Open opens it and
// stat'd as fi, to its end, as one string: through a small buffer into one
// the size of the file (os.ReadFile and a conversion to string would hold
// the file twice, and every page a process touches first costs it a page
// fault). A file that reads longer than MaxFileBytes (a pipe, a file
// grown since) is refused as Open refuses it.
func readFrom(path string, f *os.File, fi fs.FileInfo) (string, error) {
	var b strings.Builder
	if fi.Mode().IsRegular() {
		b.Grow(int(min(fi.Size(), MaxFileBytes)))
	}
	buf := make([]byte, 16<<10)
	r := io.LimitReader(f, MaxFileBytes+1)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if b.Len() > MaxFileBytes {
			return "", tooLarge(path, -1)
		}
		if err == io.EOF {
			return b.String(), nil
		}
		if err != nil {
			return "", err
		}
	}
}
