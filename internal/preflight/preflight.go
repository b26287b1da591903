// Package preflight checks, before a command does something that cannot be
// taken back (runs a program, answers an agent), that the store write which
// must follow it can succeed: the object directory accepts files, and the
// lock of every ref the write moves (and of packed-refs) can be taken now or
// within the lock timeout. It follows git's lock-file protocol
// (<ref>.lock, O_CREAT|O_EXCL) and releases what it takes at once, so a
// concurrent git or readproof process only ever sees a short-lived lock.
//
// A check passing does not reserve anything: a later write can still lose a
// race, and then fails the way it always did. What it rules out is the
// common case of a store that is read-only, on a read-only file system, or
// jammed by a lock that a killed process left behind.
//
// It imports only the leaves internal/hint, internal/progress and
// internal/text.
package preflight

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/text"
)

// ErrNotWritable is wrapped by the error of a store that refuses writes.
var ErrNotWritable = errors.New("the store cannot be written")

// ErrLocked is wrapped by the error of a ref lock held past the timeout.
var ErrLocked = errors.New("a ref lock is held")

// Options are the lock timings of the store (zero values are the
// defaults of gitstore: 15 s and 10 s).
type Options struct {
	LockTimeout  time.Duration
	StaleLockAge time.Duration
	// LockWait, when set, hears once of a wait for a held lock that has
	// lasted progress.WaitNotice (gitstore.Options.LockWait).
	LockWait func(progress.Wait)
}

// Write checks that objects can be added to the bare repository gitDir and
// that the locks of refs (full names such as refs/heads/main) and of
// packed-refs can be taken. Every ref in refs may be one that does not
// exist yet.
func Write(gitDir string, refs []string, opts Options) error {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 15 * time.Second
	}
	if opts.StaleLockAge <= 0 {
		opts.StaleLockAge = 10 * time.Second
	}
	f, err := os.CreateTemp(filepath.Join(gitDir, "objects"), "tmp_preflight_")
	if err != nil {
		return fmt.Errorf("%w: %s: no new object can be written: %w", ErrNotWritable, gitDir, err)
	}
	name := f.Name()
	f.Close()
	os.Remove(name)

	deadline := time.Now().Add(opts.LockTimeout)
	for _, target := range append(append([]string(nil), refs...), "packed-refs") {
		if err := takeAndRelease(gitDir, target, deadline, opts); err != nil {
			return err
		}
	}
	return nil
}

// takeAndRelease takes <gitDir>/<ref>.lock and removes it at once. When the
// ref's directory does not exist yet, it checks that the nearest existing
// directory above it accepts a lock-named file instead (git and readproof
// skip names ending in .lock when they list refs).
func takeAndRelease(gitDir, ref string, deadline time.Time, opts Options) error {
	stale := opts.StaleLockAge
	lock := filepath.Join(gitDir, filepath.FromSlash(ref)) + ".lock"
	dir := filepath.Dir(lock)
	for dir != gitDir && !isDir(dir) {
		dir = filepath.Dir(dir)
	}
	if dir != filepath.Dir(lock) {
		lock = filepath.Join(dir, "readproof-preflight-"+strconv.FormatUint(rand.Uint64(), 36)+".lock")
	}
	backoff := time.Millisecond
	var wait progress.Waiter // started when the lock is first found held
	for waiting := false; ; {
		f, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if err == nil {
			f.Close()
			os.Remove(lock)
			return nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s: cannot take the lock of %s: %w", ErrNotWritable, gitDir, ref, err)
		}
		fi, err := os.Lstat(lock)
		if err == nil && time.Since(fi.ModTime()) >= stale {
			return nil // left by a crashed process: the writer breaks it
		}
		now := time.Now()
		if !now.Before(deadline) {
			return hint.With(fmt.Errorf("%w: %s is still held after the lock timeout (%s); if no git or readproof process is using the store, remove the file", ErrLocked, lock, opts.LockTimeout),
				fmt.Sprintf("another git or readproof is writing to the store: run the command again once it is done; if none is (a killed process left the lock), the next write removes it once older than %s, or remove it now: rm %s",
					stale, text.ShellArg(lock)))
		}
		if !waiting {
			wait, waiting = progress.NewWaiter(opts.LockWait, 0), true
		}
		if err == nil {
			wait.Check(now, func() (progress.Wait, bool) {
				return progress.FileWait(lock, "another git or readproof", fi.ModTime(), now, deadline, stale), true
			})
		}
		time.Sleep(min(backoff, time.Until(deadline)))
		backoff = min(2*backoff, 64*time.Millisecond)
	}
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
