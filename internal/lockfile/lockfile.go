// Package lockfile owns the lock files readproof takes beside the files it
// rewrites outside its git store (readproof.toml.lock, the MCP token file's
// FILE.lock) and the probe of a store's ref locks that exec and mcp make
// before they act (internal/preflight). A lock is the file PATH created with
// O_CREAT|O_EXCL, as git takes its locks; it is empty and held only while
// the file it guards is read, changed and replaced.
//
// A readproof that holds a lock holds an exclusive flock on it, from just
// after its create until its removal: the kernel drops it when the process
// dies, however it dies, and keeps it while the process is stopped (Ctrl-Z,
// a debugger, a paused machine). A lock older than the stale age (its
// modification time) whose flock nobody holds was left by a killed process
// and is taken over; one whose flock a live process holds never is, however
// old, nor is any lock on a file system without flock (nobody can tell
// there whether its holder lives). A process stopped between its create
// and its flock for the whole stale age can lose its lock: it finds so once
// it has the flock (the path names another file, or none) and tries
// again. Two waiters that find one stale lock at
// once must not both get in: each first takes a second lock, the break lock
// (PATH's name with ".break.lock" for ".lock"), checks under it that the lock
// is still the file it judged stale, and only then removes it. Errors other
// than "exists" (a read-only directory or file system, a full disk) end the
// wait at once, naming the lock file, with a hint. No directory is fsynced:
// a lock that a crash loses was held by a process that is gone.
//
// It imports only internal/diskfull, internal/hint, internal/progress and
// internal/text, and reaches neither gitstore nor go-git. gitstore keeps its
// own ref locks (their modes follow the repository's sharing, and they hold
// the new value).
package lockfile

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/diskfull"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/text"
)

// ErrLocked is matched (errors.Is) by the error of a lock that another
// process held past the timeout; that error carries a hint naming the lock
// file, quoted for a shell.
var ErrLocked = errors.New("the lock file is held by another process")

// Options bound and describe the wait for a lock another process holds.
// Each owner of a lock has its own timings; this package has no defaults.
type Options struct {
	// Timeout bounds the wait from now (zero or less: one try). Deadline,
	// when set, ends the wait instead, so that several locks taken in turn
	// share one timeout; the error still names Timeout.
	Timeout  time.Duration
	Deadline time.Time
	// StaleAge: a lock whose modification time is at least this old, and
	// whose flock no live process holds, was left by a killed process and
	// is taken over (zero or less: never).
	StaleAge time.Duration
	// Holder names who holds a lock ("another readproof"; empty: "another
	// process"), Task what it is doing ("changing the token file"): the
	// wait's line and the hint of the error say them.
	Holder, Task string
	// Wait, when set, hears once of a wait that has lasted
	// progress.WaitNotice.
	Wait func(progress.Wait)

	// judged, when set, is called when a lock has been judged stale,
	// before it is taken over (tests line waiters up there).
	judged func()
}

// Lock is a lock file this process created. Release removes it.
type Lock struct {
	path string
	fi   fs.FileInfo // the file we created, to tell it from a later one
	f    *os.File    // open while we hold its flock (nil: no flock here)
}

// Acquire creates the lock file path, waiting while another process holds
// it: until the lock is released, or until it is older than o.StaleAge and
// is taken over, or until the deadline, when the error matches ErrLocked.
// Any other failure to create the file returns at once.
func Acquire(path string, o Options) (*Lock, error) {
	fi, f, err := take(path, o, false)
	if err != nil {
		return nil, err
	}
	return &Lock{path: path, fi: fi, f: f}, nil
}

// Owner is what the owner of a file that readproof rewrites (the policy
// file, the MCP token file) states once about the lock beside it,
// FILE.lock, which another readproof holds while changing it: the timings
// its callers may leave unset, what a holder is doing, and the words its
// errors start with.
type Owner struct {
	// Timeout and StaleAge are the owner's defaults, for the caller's
	// Options.Timeout and Options.StaleAge of zero or less.
	Timeout, StaleAge time.Duration
	// Task is what a holder is doing ("changing the policy file").
	Task string
	// Locked starts the error of a lock held past the timeout; that error
	// matches it (errors.Is) as well as ErrLocked.
	Locked error
	// Failed starts the error of any other failure to take the lock.
	Failed string
}

// Acquire takes file+".lock" for a readproof process, waiting as o says,
// with the owner's timings where o leaves them unset, and the owner's
// words before the error.
func (w Owner) Acquire(file string, o Options) (*Lock, error) {
	if o.Timeout <= 0 {
		o.Timeout = w.Timeout
	}
	if o.StaleAge <= 0 {
		o.StaleAge = w.StaleAge
	}
	o.Holder, o.Task = "another readproof", w.Task
	l, err := Acquire(file+".lock", o)
	if errors.Is(err, ErrLocked) {
		return nil, fmt.Errorf("%w: %w", w.Locked, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.Failed, err)
	}
	return l, nil
}

// Probe checks that the lock file path can be taken now or within the
// timeout: it takes the lock and releases it at once. A stale lock whose
// flock nobody holds is left where it is and counts as free, for the
// writer that follows to take over (gitstore, whose ref locks hold values
// and are broken by its own rules, which are these).
// Its errors are Acquire's.
func Probe(path string, o Options) error {
	fi, f, err := take(path, o, true)
	if err != nil || fi == nil {
		return err
	}
	return (&Lock{path: path, fi: fi, f: f}).Release()
}

// Release removes the lock file if it is still the one Acquire created: a
// lock held past the stale age may have been taken over, and the new
// holder's file is not removed. A lock whose flock we hold is removed
// before the flock goes, so that nobody breaks it between the look and the
// removal. Calls after the first do nothing.
func (l *Lock) Release() error {
	if l == nil || l.path == "" {
		return nil
	}
	path := l.path
	l.path = ""
	mine := func(fi fs.FileInfo) bool { return same(fi, l.fi) }
	if f := l.f; f != nil {
		defer f.Close()
		l.f = nil
		// open, its inode is not reused: the path names our file if it
		// names that inode
		mine = func(fi fs.FileInfo) bool { return os.SameFile(fi, l.fi) }
	}
	if fi, err := os.Lstat(path); err != nil || !mine(fi) {
		return nil
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove the lock file %s: %w", path, err)
	}
	return nil
}

// take is Acquire and, with probe, Probe: it returns the created file's
// identity and, while its flock is held, the open file; or nil for a stale
// lock that a probe leaves in place.
func take(path string, o Options, probe bool) (fs.FileInfo, *os.File, error) {
	start := time.Now()
	deadline := o.Deadline
	if deadline.IsZero() {
		deadline = start.Add(o.Timeout)
	}
	stale := o.StaleAge
	if stale <= 0 {
		stale = time.Duration(1<<63 - 1)
	}
	backoff := time.Millisecond
	var wait progress.Waiter // started when the lock is first found held
	for waiting := false; ; {
		fi, f, err := createHeld(path, deadline)
		if err == nil {
			return fi, f, nil
		}
		switch {
		case errors.Is(err, errBroken):
			continue
		case errors.Is(err, errFlockBusy):
			return nil, nil, heldError(path, o)
		case !errors.Is(err, fs.ErrExist):
			return nil, nil, notWritable("cannot create the lock file", path, err)
		}
		held, err := os.Lstat(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if time.Now().Before(deadline) {
				continue // released meanwhile
			}
		case err != nil:
			return nil, nil, fmt.Errorf("lock file %s: %w", path, err)
		case time.Since(held.ModTime()) >= stale && probe:
			st, release := FlockHolder(path, held)
			if release != nil {
				release()
			}
			switch st {
			case HolderGone:
				return nil, nil, nil
			case HolderChanged:
				continue
			}
		case time.Since(held.ModTime()) >= stale:
			if o.judged != nil {
				o.judged()
			}
			gone, err := breakStale(path, held)
			if err != nil {
				return nil, nil, err
			}
			if gone {
				continue
			}
		}
		now := time.Now()
		if !now.Before(deadline) {
			return nil, nil, heldError(path, o)
		}
		if !waiting {
			wait, waiting = progress.NewWaiter(o.Wait, 0), true
		}
		wait.Check(now, func() (progress.Wait, bool) {
			fi, err := os.Lstat(path)
			if err != nil {
				return progress.Wait{}, false
			}
			willBreak := stale
			if !breakable(path, fi) {
				willBreak = time.Duration(1<<63 - 1) // a live holder's: never taken over
			}
			return progress.FileWait(path, holder(o), fi.ModTime(), now, deadline, willBreak), true
		})
		// jittered, so that waiters polling one lock drift apart
		time.Sleep(min(backoff/2+rand.N(backoff), deadline.Sub(now)))
		backoff = min(2*backoff, 64*time.Millisecond)
	}
}

var (
	// errBroken: a waiter broke the lock file just created before its
	// flock was taken (this process stopped that long between the two)
	errBroken = errors.New("the lock file was taken over before its flock was taken")
	// errFlockBusy: another process held the flock of the lock file just
	// created for longer than the wait
	errFlockBusy = errors.New("another process held the flock of the lock file just created")
)

// createHeld makes the lock file and takes its flock; it returns the
// file's identity and, while the flock is held, the open file. Another
// process holds the flock of a file just created only while a waiter
// looks at it, for microseconds: createHeld waits for it (up to deadline,
// and at least a second), and a file it made and then failed to hold is
// removed (dropCreated), never another's at its name.
func createHeld(path string, deadline time.Time) (fs.FileInfo, *os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, nil, err
	}
	// the identity of the file made, to remove it and no other if it
	// cannot be held; an fstat that fails leaves it (it cannot be told
	// from a file another made at its name since), for the stale rule
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	if afterCreate != nil {
		afterCreate(path)
	}
	if least := time.Now().Add(time.Second); deadline.Before(least) {
		deadline = least
	}
	held, busy := HoldFlock(f)
	for wait := time.Millisecond; busy; held, busy = HoldFlock(f) {
		if time.Now().After(deadline) {
			dropCreated(path, fi)
			f.Close()
			return nil, nil, errFlockBusy
		}
		time.Sleep(wait)
		wait = min(2*wait, 64*time.Millisecond)
	}
	if !held {
		// no flock here: as before flocks, the file is closed at once
		if err := f.Close(); err != nil {
			removeIfSame(path, fi)
			return nil, nil, err
		}
		return fi, nil, nil
	}
	if cur, err := os.Lstat(path); err != nil || !same(cur, fi) {
		f.Close()
		return nil, nil, errBroken
	}
	return fi, f, nil
}

// dropCreated removes the lock file path, which this process created
// (fi, still open: its inode is not reused) and could not take the flock
// of, another process holding it past the wait: a waiter stopped while it
// looked (the file would be left, held by nobody, for the stale rule or a
// human to remove), or one that judged it stale (this process stopped
// between its create and its flock) and is taking it over. It is removed
// only under the break lock, so that no waiter is between its look at the
// file and its removal of it (breakStale), and only while path still names
// it: never a lock another made at the name since. A break lock another
// holds leaves the file to that waiter, which removes it if it judged it.
func dropCreated(path string, fi fs.FileInfo) {
	guard := breakName(path)
	g, err := create(guard)
	if err != nil {
		return
	}
	defer removeIfSame(guard, g)
	if now, err := os.Lstat(path); err == nil && os.SameFile(now, fi) {
		os.Remove(path)
	}
}

// afterCreate, when a test sets it, is called between the create of a lock
// file and the take of its flock: the moment a stopped process can lose
// its lock.
var afterCreate func(path string)

// breakable reports whether the lock file at path, which lstat saw as fi,
// may be taken over once stale: nobody holds its flock.
func breakable(path string, fi fs.FileInfo) bool {
	st, release := FlockHolder(path, fi)
	if release != nil {
		release()
	}
	return st != HolderAlive && st != HolderUnknown
}

// HolderState is what FlockHolder can tell of a lock file's holder.
type HolderState int

const (
	// HolderGone: nobody holds the lock's flock (a killed process left
	// the lock, or a process without flocks holds it).
	HolderGone HolderState = iota
	// HolderAlive: a live process holds its flock, running or stopped.
	HolderAlive
	// HolderUnknown: the file system has no flock, or the file cannot be
	// opened: nobody can tell whether the holder lives.
	HolderUnknown
	// HolderChanged: the path names another file now, or none.
	HolderChanged
)

// create makes a file that is not held with a flock (the break lock) and
// returns its identity.
func create(path string) (fs.FileInfo, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	return fi, nil
}

// breakStale removes the stale lock path, judged stale as judged, under the
// break lock; it reports whether path is gone or changed (try again at
// once) rather than still held.
func breakStale(path string, judged fs.FileInfo) (bool, error) {
	guard := breakName(path)
	g, err := create(guard)
	if err != nil {
		if !errors.Is(err, fs.ErrExist) {
			return false, notWritable("cannot take over the stale lock file", path, err)
		}
		// Another waiter is breaking the lock (for microseconds), or was
		// killed doing so. Its break lock is left alone even when old:
		// removing it is a look and then a remove, and a waiter between
		// the two could remove a live break lock another had just made,
		// and both would get in. The timeout's hint names it for a human
		// to remove (heldError).
		return false, nil
	}
	defer removeIfSame(guard, g)
	now, err := os.Lstat(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return true, nil
		}
		return false, fmt.Errorf("lock file %s: %w", path, err)
	}
	if !same(now, judged) {
		return true, nil // taken over by another waiter, who got in
	}
	// Holding its flock, we may remove it: its holder is gone.
	st, release := FlockHolder(path, judged)
	switch st {
	case HolderChanged:
		return true, nil
	case HolderAlive, HolderUnknown:
		return false, nil
	}
	defer release()
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, notWritable("cannot take over the stale lock file", path, err)
	}
	return true, nil
}

// breakName is the break lock of the lock file path: "x.lock" has
// "x.break.lock", so a directory whose readers skip *.lock skips it too.
func breakName(path string) string {
	return strings.TrimSuffix(path, ".lock") + ".break.lock"
}

func removeIfSame(path string, fi fs.FileInfo) {
	if now, err := os.Lstat(path); err == nil && same(now, fi) {
		os.Remove(path)
	}
}

// same reports whether two looks at a lock file saw one file: the same
// file identity and modification time (an inode number is reused at once
// when a file is removed and another created).
func same(a, b fs.FileInfo) bool {
	return os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}

func holder(o Options) string {
	if o.Holder == "" {
		return "another process"
	}
	return o.Holder
}

// lockedError is a lock held past the timeout.
type lockedError struct{ msg string }

func (e *lockedError) Error() string        { return e.msg }
func (e *lockedError) Is(target error) bool { return target == ErrLocked }

func heldError(path string, o Options) error {
	msg := path + " is held"
	if o.Timeout > 0 {
		msg = fmt.Sprintf("%s is still held after %s", path, o.Timeout)
	}
	task := o.Task
	if task == "" {
		task = "using it"
	}
	st := HolderChanged
	if li, err := os.Lstat(path); err == nil {
		var release func()
		st, release = FlockHolder(path, li)
		if release != nil {
			release()
		}
		if st == HolderAlive {
			// never taken over, and no rm offered (a model given the hint
			// may run it)
			return hint.With(&lockedError{msg: msg + " by a live process (it holds the lock's flock), maybe stopped"},
				fmt.Sprintf("%s is %s, or is stopped while it holds the lock (Ctrl-Z, a debugger, a paused machine): let it finish (fg, or continue it), then run the command again; a lock is never taken from a live process", holder(o), task))
		}
	}
	if o.StaleAge > 0 {
		// a stale lock whose break lock a waiter killed while taking it
		// over left behind: neither is taken over (breakStale)
		guard := breakName(path)
		if gi, err := os.Lstat(guard); err == nil && time.Since(gi.ModTime()) >= o.StaleAge {
			if li, err := os.Lstat(path); err == nil && time.Since(li.ModTime()) >= o.StaleAge {
				h := fmt.Sprintf("a process killed while it took over the stale lock %s left %s; if no readproof is running, remove both: rm %s %s",
					path, guard, text.ShellArg(guard), text.ShellArg(path))
				return hint.With(&lockedError{msg: msg + " (stale, with the break lock " + guard + " a killed process left)"}, h)
			}
		}
	}
	h := fmt.Sprintf("%s is %s: run the command again once it is done", holder(o), task)
	switch {
	case st == HolderUnknown:
		// never taken over (breakable): before session 28's re-read the
		// hint said it would be once older than the stale age
		h += fmt.Sprintf("; readproof cannot take this lock's flock (a file system without flock, or a lock file it may not open), so it cannot tell a killed process's lock from a live one's and never takes it over: if none is, remove it: rm %s", text.ShellArg(path))
	case o.StaleAge > 0:
		h += fmt.Sprintf("; if none is (a killed process left the lock), readproof takes it over once it is older than %s, or remove it now: rm %s", o.StaleAge, text.ShellArg(path))
	default:
		h += fmt.Sprintf("; if none is (a killed process left the lock), remove it: rm %s", text.ShellArg(path))
	}
	return hint.With(&lockedError{msg: msg}, h)
}

// notWritable is the error of a lock file that cannot be created or
// removed for another reason than its being held: it names the file, keeps
// the cause for errors.Is (fs.ErrPermission, syscall.EROFS) and says what to
// check.
func notWritable(what, path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err // the path is named below, once
	}
	e := fmt.Errorf("%s %s: %w", what, path, err)
	dir := filepath.Dir(path)
	switch {
	case errors.Is(err, syscall.EROFS):
		return hint.With(e, fmt.Sprintf("%s is on a read-only file system: remount it read-write, or work on a copy where you can write", dir))
	case errors.Is(err, fs.ErrPermission):
		return hint.With(e, fmt.Sprintf("this user may not create or remove files in %s (permission denied): fix its permissions (ls -ld %s shows its owner and mode), or run readproof as a user who may", dir, text.ShellArg(dir)))
	case diskfull.Is(err):
		return hint.With(e, fmt.Sprintf("the file system of %s is full (or your quota is used up): free some space, then run the command again", dir))
	}
	return e
}
