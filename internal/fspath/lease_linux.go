package fspath

import (
	"os"
	"strconv"
	"syscall"
)

// oPath is Linux's O_PATH (010000000 on every architecture Go runs Linux
// on), which package syscall does not name.
const oPath = 0x200000

// openLeased opens path for reading, waiting, after an O_NONBLOCK open of
// it failed with EWOULDBLOCK: the file is a regular file under a lease
// another process holds (Samba's oplocks, the kernel NFS server's
// delegations), and a nonblocking open does not wait for the holder to
// give it up. The path is opened without reading (O_PATH) and judged from
// that descriptor: only a regular file (which is all a lease may be held
// on) is opened again, through that descriptor (/proc/self/fd), in
// blocking mode, which waits for the lease to be given up as any reader
// does (at most /proc/sys/fs/lease-break-time, 45 s by default). A path
// that is then something else, or a system without /proc, gives back err,
// the first open's error: nothing found at the path after that open can
// make this one wait for a writer.
func openLeased(path string, err error) (*os.File, error) {
	fd, oerr := syscall.Open(path, oPath|syscall.O_CLOEXEC, 0)
	if oerr != nil {
		return nil, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if syscall.Fstat(fd, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, err
	}
	rfd, rerr := syscall.Open("/proc/self/fd/"+strconv.Itoa(fd), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if rerr != nil {
		if rerr == syscall.ENOENT {
			return nil, err // no /proc
		}
		return nil, &os.PathError{Op: "open", Path: path, Err: rerr}
	}
	return os.NewFile(uintptr(rfd), path), nil
}
