package diskfull

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"syscall"
	"testing"
)

func TestIs(t *testing.T) {
	full := []error{
		syscall.ENOSPC,
		syscall.EDQUOT,
		&fs.PathError{Op: "write", Path: "x", Err: syscall.ENOSPC},
		fmt.Errorf("write pack: %w", &os.LinkError{Op: "link", Old: "a", New: "b", Err: syscall.EDQUOT}),
	}
	notFull := []error{nil, syscall.EACCES, syscall.EROFS, fs.ErrNotExist, errors.New("No space left on device")}
	if runtime.GOOS == "windows" {
		full = append(full, syscall.Errno(112), &fs.PathError{Op: "write", Path: "x", Err: syscall.Errno(39)})
	} else {
		// Windows' codes mean other things elsewhere (39 is ENOTEMPTY on Linux)
		notFull = append(notFull, syscall.Errno(39))
	}
	for _, err := range full {
		if !Is(err) {
			t.Errorf("Is(%v) = false, want true", err)
		}
	}
	for _, err := range notFull {
		if Is(err) {
			t.Errorf("Is(%v) = true, want false", err)
		}
	}
}

func TestWindowsCodes(t *testing.T) {
	if runtime.GOOS != "windows" {
		if len(platformCodes) != 0 {
			t.Fatalf("platform codes %v outside Windows", platformCodes)
		}
		return
	}
	for _, c := range []syscall.Errno{39, 112} {
		if !Is(c) {
			t.Errorf("Windows code %d not seen as a full disk", c)
		}
	}
}
