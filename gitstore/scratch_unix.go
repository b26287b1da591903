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
