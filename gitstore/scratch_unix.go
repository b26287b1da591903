//go:build unix

package gitstore

import (
	"os"
	"syscall"
	"time"
)

// holdScratch takes an exclusive flock on the fetch view directory dir for as
// long as the view is in use. The kernel drops it when the process dies,
// however it dies, so a sweep that can take the lock knows the view was
// abandoned (sweepScratch).
func holdScratch(dir string) (release func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	switch err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err {
	case nil:
	case syscall.EWOULDBLOCK: // a sweep looking at it: it was just made
		f.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	default:
		// A filesystem without flock (ENOLCK, EOPNOTSUPP): the view goes
		// unlocked; a sweep there cannot lock it either, so it is never
		// taken for abandoned (one a killed process left stays, as
		// before).
	}
	return func() { f.Close() }, nil // closing the last descriptor drops the lock
}

// scratchAbandoned reports whether no live process holds the fetch view dir
// (its flock is free); while ok, the caller holds the lock and must call
// release. The view must be older than the stale-lock age too (the caller
// checks), which covers the moment between its creation and its lock.
func scratchAbandoned(dir string, _ time.Time) (release func(), ok bool) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// lockSameDir takes the flock of the directory dir, which lstat saw as fi,
// and, holding it, lstats dir again: when that is still the directory fi
// saw, it returns it (cur, for its age). While the lock is held nobody
// else removes that directory (a sweep needs the lock) and nothing else
// can be made by its name, so the path names the directory locked. ok is
// false, and nothing is held, when someone else holds the lock or dir is
// another directory (or no directory) now. A directory is the same when
// its device, inode and modification time are: a file system may give a
// directory made since by that name the inode of the one removed (ext4
// does), and no abandoned directory changes while nobody holds its lock.
func lockSameDir(dir string, fi os.FileInfo) (release func(), cur os.FileInfo, ok bool) {
	release, ok = scratchAbandoned(dir, fi.ModTime())
	if !ok {
		return nil, nil, false
	}
	// scratchAbandoned opened dir by its path again: compare what it holds
	cur, err := os.Lstat(dir)
	if err != nil || !os.SameFile(fi, cur) || !cur.ModTime().Equal(fi.ModTime()) {
		release()
		return nil, nil, false
	}
	return release, cur, true
}

// ownDir reports whether this process's user owns the directory fi.
func ownDir(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return !ok || int(st.Uid) == os.Geteuid()
}
