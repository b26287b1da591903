//go:build unix

package fspath

import (
	"os"
	"strconv"
	"strings"
	"syscall"
)

// openNonblock keeps an open of a named pipe from waiting for its writer.
const openNonblock = syscall.O_NONBLOCK

// setBlocking clears O_NONBLOCK on f, which OpenRegular opened with it.
func setBlocking(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.SetNonblock(int(fd), false) }); err != nil {
		return err
	}
	return serr
}

// handedPipe says whether f, a pipe opened at path, is an anonymous pipe
// (one this process was handed) rather than a named pipe in a directory:
// Linux names the open descriptor's file in /proc/self/fd ("pipe:[N]" for
// an anonymous one), so the answer is the open file's and no later look
// at path's. Elsewhere, or without /proc, path is judged (handedPath).
func handedPipe(f *os.File, path string) bool {
	rc, err := f.SyscallConn()
	if err == nil {
		var to string
		var lerr error = syscall.ENOENT
		if rc.Control(func(fd uintptr) { to, lerr = os.Readlink("/proc/self/fd/" + strconv.Itoa(int(fd))) }) == nil && lerr == nil {
			return strings.HasPrefix(to, "pipe:[")
		}
	}
	return handedPath(path)
}
