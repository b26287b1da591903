//go:build unix

package gitstore

import (
	"os"
	"syscall"
)

// holdFlock takes an exclusive flock on f, a lock file this process has
// just created, for as long as the file is open: the kernel drops it when
// the process dies, however it dies, and not while it is stopped
// (lockHolder). busy: someone else holds it, a breaker that found the
// file old (the creator stopped between its create and this call): the
// caller gives the file up. Neither held nor busy: the file system has no
// flock (ENOLCK, EOPNOTSUPP); nobody can take the lock's flock there, so
// nobody breaks the lock either.
func holdFlock(f *os.File) (held, busy bool) {
	switch syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) {
	case nil:
		return true, false
	case syscall.EWOULDBLOCK:
		return false, true
	}
	return false, false
}

// lockHolder tells what can be known of the holder of the lock file at
// path, which lstat saw as fi. holderGone means provably no live process
// holds it by readproof's protocol: the caller then holds the lock's
// flock, and with it the right to break the lock, until it calls release.
// The file is opened again by its path: it is the one fi saw only when
// its device, inode and modification time match (a file system may give a
// lock made since the inode of one removed, and nobody changes a lock
// whose flock nobody holds).
func lockHolder(path string, fi os.FileInfo) (st holderState, release func()) {
	fd, err := openRetry(path, syscall.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK|syscall.O_CLOEXEC, 0)
	if err != nil {
		if isMissing(err) {
			return holderChanged, nil
		}
		return holderUnknown, nil
	}
	f := os.NewFile(uintptr(fd), path)
	switch err := syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB); err {
	case nil:
	case syscall.EWOULDBLOCK:
		f.Close()
		return holderAlive, nil
	default:
		f.Close()
		return holderUnknown, nil
	}
	cur, err := f.Stat()
	if err != nil || !os.SameFile(cur, fi) || !cur.ModTime().Equal(fi.ModTime()) {
		f.Close()
		return holderChanged, nil
	}
	return holderGone, func() { f.Close() }
}
