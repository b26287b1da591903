package gitstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/text"
)

// heldLock is a lock file we created with O_CREAT|O_EXCL.
type heldLock struct {
	path string      // the lock file
	f    *os.File    // open until its content is durable
	fi   os.FileInfo // identity of our lock file
	done bool        // renamed into place or removed
	// left is why release could not remove the lock file (nil: removed,
	// or not ours any more)
	left error
}

// release closes the lock and removes it if it is still ours.
func (l *heldLock) release() {
	if l == nil || l.done {
		return
	}
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.left = err
		}
	}
	l.done = true
}

// owned reports whether the lock file is still the one we created.
func (l *heldLock) owned() bool {
	fi, err := os.Lstat(l.path)
	return err == nil && os.SameFile(fi, l.fi)
}

// lockFile takes target+".lock" with git's protocol: O_CREAT|O_EXCL, retried
// with jittered backoff until deadline. A lock file older than StaleLockAge
// is taken to be left by a crashed process and removed.
func (s *repo) lockFile(target, refName string, deadline time.Time) (*heldLock, error) {
	lock := target + ".lock"
	backoff := time.Millisecond
	var wait progress.Waiter // started when the lock is first found held
	waiting := false
	for attempt := 0; ; attempt++ {
		f, err := s.perm.create(lock, s.perm.file())
		if err == nil {
			fi, err := f.Stat()
			if err != nil {
				f.Close()
				os.Remove(lock)
				return nil, fmt.Errorf("lock %s: %w", lock, err)
			}
			return &heldLock{path: lock, f: f, fi: fi}, nil
		}
		switch {
		case errors.Is(err, fs.ErrExist):
			if s.breakStaleLock(lock) {
				continue
			}
		case errors.Is(err, fs.ErrNotExist) && attempt < 64:
			// The directory is missing, or git removed it as empty while
			// pruning refs: (re)create it and try again.
			if err := s.perm.mkdirAll(filepath.Dir(lock)); err != nil {
				if errors.Is(err, fs.ErrNotExist) {
					continue // a parent was pruned as empty meanwhile
				}
				if errors.Is(err, syscall.ENOTDIR) || errors.Is(err, fs.ErrExist) {
					return nil, dirFileConflict(refName)
				}
				return nil, fmt.Errorf("lock %s: %w", lock, err)
			}
			continue
		case errors.Is(err, syscall.ENOTDIR):
			return nil, dirFileConflict(refName)
		default:
			return nil, fmt.Errorf("lock %s: %w", lock, err)
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, hint.With(fmt.Errorf("lock %s: %w: still held after %s; if no git or readproof process is using the store, remove the file",
				lock, ErrLocked, s.opts.LockTimeout),
				fmt.Sprintf("another git or readproof is writing to the store: run the command again once it is done; if none is (a killed process left the lock), the next write removes it once older than %s, or remove it now: rm %s",
					s.opts.StaleLockAge, text.ShellArg(lock)))
		}
		if !waiting {
			wait, waiting = progress.NewWaiter(s.opts.LockWait, s.opts.LockWaitNotice), true
		}
		wait.Check(now, func() (LockWaitInfo, bool) { return s.lockWaitInfo(lock, now, deadline) })
		sleep := backoff/2 + time.Duration(mrand.Int64N(int64(backoff)))
		if rest := deadline.Sub(now); sleep > rest {
			sleep = rest
		}
		time.Sleep(sleep)
		if backoff < 64*time.Millisecond {
			backoff *= 2
		}
	}
}

// lockWaitInfo is the wait for lock, held by another process, and what
// happens at the end of it; false when the lock is gone meanwhile.
func (s *repo) lockWaitInfo(lock string, now, deadline time.Time) (LockWaitInfo, bool) {
	fi, err := os.Lstat(lock)
	if err != nil {
		return LockWaitInfo{}, false
	}
	return progress.FileWait(lock, "another git or readproof", fi.ModTime(), now, deadline, s.opts.StaleLockAge), true
}

func dirFileConflict(name string) error {
	return fmt.Errorf("update %s: a ref cannot also be a directory of refs (%s or one of its parents is taken): choose another name", name, name)
}

// breakStaleLock removes lock if it is older than StaleLockAge. It reports
// whether the caller should retry at once (the lock is gone).
func (s *repo) breakStaleLock(lock string) bool {
	fi, err := os.Lstat(lock)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if time.Since(fi.ModTime()) < s.opts.StaleLockAge {
		return false
	}
	// Move it aside first and check it is the file we judged stale: another
	// process may have broken it and taken a fresh lock meanwhile. The
	// aside name ends in ".lock" so git never reads it as a ref.
	var rnd [6]byte
	rand.Read(rnd[:])
	aside := strings.TrimSuffix(lock, ".lock") + ".stale-" + hex.EncodeToString(rnd[:]) + ".lock"
	if err := os.Rename(lock, aside); err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	got, err := os.Lstat(aside)
	if err == nil && os.SameFile(got, fi) {
		os.Remove(aside)
		return true
	}
	// We moved a fresh lock: put it back unless the name is taken again.
	if os.Link(aside, lock) != nil {
		os.Rename(aside, lock) // fails harmlessly where links are unsupported
	}
	os.Remove(aside)
	return false
}
