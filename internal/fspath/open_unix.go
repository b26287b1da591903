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
			return strings.HasPrefix(to, "pipe:[") || handedFIFO(f, path)
		}
	}
	return handedPath(path)
}

// handedFIFO says whether f, a named pipe opened at path, is the one this
// process holds at the descriptor path names (/dev/stdin, /dev/fd/N,
// /proc/self/fd/N): a shell's `--config /dev/stdin < fifo` hands a named
// pipe as a descriptor, which the user named, and whose open the shell
// made (it waited for the writer). The open file and the descriptor are
// compared (device and inode), so a named pipe found at a path in a
// directory, or put at a descriptor's path after the open, is not read.
func handedFIFO(f *os.File, path string) bool {
	n, ok := descriptorOf(path)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	var held syscall.Stat_t
	if !ok || syscall.Fstat(n, &held) != nil {
		return false
	}
	return held.Dev == st.Dev && held.Ino == st.Ino && held.Mode&syscall.S_IFMT == syscall.S_IFIFO
}

// descriptorOf is the descriptor of this process that path names
// (/dev/stdin, /dev/fd/N, /proc/self/fd/N), if it names one.
func descriptorOf(path string) (int, bool) {
	if path == "/dev/stdin" {
		return 0, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/"} {
		if rest, ok := strings.CutPrefix(path, dir); ok {
			n, err := strconv.Atoi(rest)
			return n, err == nil && n >= 0
		}
	}
	return 0, false
}
