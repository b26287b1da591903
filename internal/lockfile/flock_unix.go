//go:build unix

package lockfile

import (
	"errors"
	"io/fs"
	"os"
	"syscall"
)

// HoldFlock takes an exclusive flock on f, a lock file this process has
// just created, for as long as f is open: the kernel drops it when the
// process dies, however it dies, and keeps it while the process is
// stopped. busy: another process holds it (a waiter looking at it, for
// microseconds). Neither held nor busy: the file system has no flock.
func HoldFlock(f *os.File) (held, busy bool) {
	for {
		switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
		case nil:
			return true, false
		case syscall.EINTR:
			continue
		case syscall.EWOULDBLOCK:
			return false, true
		}
		return false, false
	}
}

// FlockHolder tells what can be known of the holder of the lock file at
// path, which lstat saw as judged. HolderGone: nobody holds its flock, so
// no live readproof holds the lock (a killed one left it); the caller then
// holds the flock itself, and the right to remove the file, until it calls
// release.
func FlockHolder(path string, judged fs.FileInfo) (st HolderState, release func()) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return HolderChanged, nil
		}
		return HolderUnknown, nil
	}
	held, busy := HoldFlock(f)
	switch {
	case busy:
		f.Close()
		return HolderAlive, nil
	case !held:
		f.Close()
		return HolderUnknown, nil
	}
	if cur, err := f.Stat(); err != nil || !same(cur, judged) {
		f.Close()
		return HolderChanged, nil
	}
	return HolderGone, func() { f.Close() }
}
