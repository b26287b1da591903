package gitstore

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/text"
)

// heldLock is a lock file we created with O_CREAT|O_EXCL.
type heldLock struct {
	path string      // the lock file
	f    *os.File    // open until its content is durable; while flocked, until it is renamed or removed
	fi   os.FileInfo // identity of our lock file
	done bool        // renamed into place or removed
	// flocked: we hold the lock file's flock (holdFlock), so no other
	// process breaks the lock while f is open, however long this one is
	// stopped
	flocked bool
	// left is why release could not remove the lock file (nil: removed,
	// or not ours any more)
	left error
}

// release removes the lock if it is still ours, then closes it: a lock
// whose flock we hold is removed before the flock goes, so nobody breaks
// it between our check and our removal.
func (l *heldLock) release() {
	if l == nil || l.done {
		return
	}
	if l.f != nil && !l.flocked {
		l.f.Close()
		l.f = nil
	}
	if fi, err := os.Lstat(l.path); err == nil && os.SameFile(fi, l.fi) {
		if err := os.Remove(l.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			l.left = err
		}
	}
	l.renamed()
}

// renamed marks the lock done (renamed into place, or removed) and closes
// it, which drops its flock.
func (l *heldLock) renamed() {
	if l.f != nil {
		l.f.Close()
		l.f = nil
	}
	l.done = true
}

// closeUnflocked closes the lock file unless we hold its flock (which
// lasts while the file is open): its content is durable; it reports the
// error of the close.
func (l *heldLock) closeUnflocked() error {
	if l.flocked || l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

// owned reports whether the lock file is still the one we created.
func (l *heldLock) owned() bool {
	fi, err := os.Lstat(l.path)
	return err == nil && os.SameFile(fi, l.fi)
}

// The flock protocol of a lock file (its holder's flock, and what a
// breaker can tell of it) is internal/lockfile's, shared with the locks on
// readproof.toml and the MCP token file.
type holderState = lockfile.HolderState

const (
	holderGone    = lockfile.HolderGone
	holderAlive   = lockfile.HolderAlive
	holderUnknown = lockfile.HolderUnknown
	holderChanged = lockfile.HolderChanged
)

// holdFlock is lockfile.HoldFlock. On Windows there is no flock: while the
// holder keeps its lock file open (until its content is durable,
// makeDurable), Windows refuses to rename or remove it (Go opens files
// without FILE_SHARE_DELETE), so no breaker takes it then; the holder must
// close it before its own rename.
func holdFlock(f *os.File) (held, busy bool) { return lockfile.HoldFlock(f) }

// lockHolder is lockfile.FlockHolder: holderGone only when nobody holds
// the lock's flock and path still names the file lstat saw as fi (device,
// inode, modification time and size); the caller then holds the flock
// until it calls release.
func lockHolder(path string, fi os.FileInfo) (holderState, func()) {
	return lockfile.FlockHolder(path, fi)
}

// takeLock makes f, the lock file just created at lock, a heldLock: it
// takes the file's flock and makes sure the path still names the file. A
// breaker finds the file old only if this process stopped between its
// create and its flock for the whole stale-lock age; the path is looked
// at again (an lstat) only then: when the file's modification time, read
// once the flock is held, is at least half the stale-lock age ago. (A
// breaker whose clock is that far ahead of the file system's is outside
// the protocol: it would break any lock.) When a breaker broke the lock
// first, ok is false and the caller tries again. While a breaker holds
// the flock, it waits (up to deadline) for its verdict.
func (s *repo) takeLock(lock string, f *os.File, deadline time.Time) (l *heldLock, ok bool, err error) {
	held, busy := holdFlock(f)
	// A breaker looking at it (or a waiter asking lockHolder) decides in
	// microseconds, unless it is stopped: at least a second for it.
	if least := time.Now().Add(time.Second); deadline.Before(least) {
		deadline = least
	}
	for wait := time.Millisecond; busy; held, busy = holdFlock(f) {
		// it breaks the lock, or finds it young (or another file) and
		// lets it go
		if time.Now().After(deadline) {
			if fi, err := f.Stat(); err == nil {
				if cur, err := os.Lstat(lock); err == nil && os.SameFile(cur, fi) {
					os.Remove(lock) // still ours: not left behind
				}
			}
			f.Close()
			return nil, false, hint.With(fmt.Errorf("lock %s: %w: another process held the flock of the lock just made", lock, ErrLocked),
				"another readproof was looking at this lock as this one took it, and stopped there (Ctrl-Z, a debugger, a paused machine): let it go on (fg, or continue it), then run the command again ("+flockFind+")")
		}
		time.Sleep(wait)
		wait = min(2*wait, 64*time.Millisecond)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		os.Remove(lock)
		return nil, false, fmt.Errorf("lock %s: %w", lock, err)
	}
	if held && time.Since(fi.ModTime()) >= s.opts.StaleLockAge/2 {
		if cur, err := os.Lstat(lock); err != nil || !os.SameFile(cur, fi) {
			f.Close()
			return nil, false, nil
		}
	}
	return &heldLock{path: lock, f: f, fi: fi, flocked: held}, true, nil
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
			if afterCreate != nil {
				afterCreate(lock)
			}
			l, ok, err := s.takeLock(lock, f, deadline)
			if ok || err != nil {
				return l, err
			}
			continue // broken by another process as we took it
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
			return nil, s.lockedError(lock)
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
	holder, stale, find := "another git or readproof", s.opts.StaleLockAge, ""
	switch s.holderOf(lock, fi) {
	case holderAlive:
		// never taken over: the wait ends at the deadline
		holder, stale, find = "a live readproof (running or stopped)", time.Duration(math.MaxInt64), flockFind
	case holderUnknown:
		stale = time.Duration(math.MaxInt64) // no flock: never taken over
	}
	w := progress.FileWait(lock, holder, fi.ModTime(), now, deadline, stale)
	w.Find = find
	return w, true
}

// holderOf is lockHolder's verdict on the lock file lstat saw as fi, with
// any flock it took released.
func (s *repo) holderOf(lock string, fi os.FileInfo) holderState {
	st, release := lockHolder(lock, fi)
	if release != nil {
		release()
	}
	return st
}

// lockedError is the error of a wait for lock that reached its deadline:
// what holds the lock, as far as can be told, and what to do. The rm of
// the lock file is offered only where no live readproof is known to hold
// it (a model given the hint may run it).
func (s *repo) lockedError(lock string) error {
	st := holderChanged
	if fi, err := os.Lstat(lock); err == nil {
		st = s.holderOf(lock, fi)
	}
	switch st {
	case holderAlive:
		return hint.With(fmt.Errorf("lock %s: %w: still held after %s by a live process (it holds the lock's flock), maybe stopped", lock, ErrLocked, s.opts.LockTimeout),
			"another readproof is writing to the store, or is stopped while it holds the lock (Ctrl-Z, a debugger, a paused machine): let it finish (fg, or continue it), then run the command again; a lock is never taken from a live process ("+flockFind+")")
	case holderUnknown:
		return hint.With(fmt.Errorf("lock %s: %w: still held after %s; if no git or readproof process is using the store, remove the file", lock, ErrLocked, s.opts.LockTimeout),
			"another git or readproof is writing to the store: run the command again once it is done; readproof cannot take this lock's flock (a file system without flock, or a lock file it may not open), so it cannot tell a killed writer's lock from a live one's and never removes it: if no git or readproof process is using the store, remove it: rm "+text.ShellArg(lock))
	}
	return hint.With(fmt.Errorf("lock %s: %w: still held after %s; if no git or readproof process is using the store, remove the file",
		lock, ErrLocked, s.opts.LockTimeout),
		fmt.Sprintf("another git or readproof is writing to the store: run the command again once it is done; if none is (a killed process left the lock), the next write removes it once older than %s, or remove it now: rm %s",
			s.opts.StaleLockAge, text.ShellArg(lock)))
}

func dirFileConflict(name string) error {
	return fmt.Errorf("update %s: a ref cannot also be a directory of refs (%s or one of its parents is taken): choose another name", name, name)
}

// breakStaleLock removes lock if it is older than StaleLockAge and
// provably no live process holds it by readproof's protocol: nobody holds
// its flock (lockHolder). A readproof that holds a lock holds its flock
// until the lock is renamed into place or removed, stopped or not; a
// killed one's flock is gone with it. A lock git holds (git takes no
// flock) is broken once stale, as before; one on a file system without
// flock never is. It reports whether the caller should retry at once (the
// lock is gone).
func (s *repo) breakStaleLock(lock string) bool {
	fi, err := os.Lstat(lock)
	if err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if time.Since(fi.ModTime()) < s.opts.StaleLockAge {
		return false
	}
	st, release := lockHolder(lock, fi)
	if st != holderGone {
		return st == holderChanged
	}
	// Holding the lock's flock, no other readproof breaks it. Move it
	// aside first and check it is the file we judged stale: a process
	// without the flock protocol (readproof before session 28) may have
	// broken it and taken a fresh lock meanwhile. The aside name ends in
	// ".lock" so git never reads it as a ref.
	defer release()
	var rnd [6]byte
	rand.Read(rnd[:])
	aside := strings.TrimSuffix(lock, ".lock") + ".stale-" + hex.EncodeToString(rnd[:]) + ".lock"
	if err := os.Rename(lock, aside); err != nil {
		return errors.Is(err, fs.ErrNotExist)
	}
	if movedAside != nil {
		movedAside(lock, aside)
	}
	got, err := os.Lstat(aside)
	if err == nil && os.SameFile(got, fi) {
		os.Remove(aside)
		return true
	}
	// We moved a fresh lock: put it back unless the name is taken again
	// (a rename would then replace the newer holder's lock, and two
	// writers would each think they hold it; the moved lock's writer
	// finds its file gone instead, and its update fails).
	if err := os.Link(aside, lock); err != nil && !errors.Is(err, fs.ErrExist) {
		os.Rename(aside, lock) // where links are unsupported
	}
	os.Remove(aside)
	return false
}
