// Package preflight checks, before a command does something that cannot be
// taken back (runs a program, answers an agent), that the store write which
// must follow it can succeed: the object directory accepts files, and the
// lock of every ref the write moves (and of packed-refs) can be taken now or
// within the lock timeout. It follows git's lock-file protocol
// (<ref>.lock, O_CREAT|O_EXCL; internal/lockfile's Probe) and releases what
// it takes at once, so a concurrent git or readproof process only ever sees
// a short-lived lock. A stale lock is left for the writer to take over.
//
// A check passing does not reserve anything: a later write can still lose a
// race, and then fails the way it always did. What it rules out is the
// common case of a store that is read-only, on a read-only file system, or
// jammed by a lock that a killed process left behind, or whose file system
// is full.
//
// It imports only internal/lockfile and the leaf internal/progress.
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

	"github.com/readproof/readproof/internal/lockfile"
	"github.com/readproof/readproof/internal/progress"
)

// ErrNotWritable is wrapped by the error of a store that refuses writes.
var ErrNotWritable = errors.New("the store cannot be written")

// probeBytes is what Write writes into its temporary object file: room
// for the few small files a receipt or a ref update makes (a pack, its
// index, lock files), each a block of 4 KiB on most file systems.
const probeBytes = 16 << 10

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
	// named as the store's own temporary object files: one left by a kill
	// -9 is removed by the next write's sweep (16 KiB, not an empty file)
	f, err := os.CreateTemp(filepath.Join(gitDir, "objects"), "tmp_obj_preflight_")
	if err != nil {
		return fmt.Errorf("%w: %s: no new object can be written: %w", ErrNotWritable, gitDir, err)
	}
	// bytes, not only a name: a full disk (or quota) still makes an empty
	// file, and then the write after the command would fail
	_, err = f.Write(make([]byte, probeBytes))
	name := f.Name()
	f.Close()
	os.Remove(name)
	if err != nil {
		return fmt.Errorf("%w: %s: no new object can be written: %w", ErrNotWritable, gitDir, err)
	}

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
	var err error
	// The directory found can go before the lock is made in it: a
	// concurrent git or readproof that packs refs removes the ref
	// directories it left empty (gitstore's lockFile retries the same
	// way). Then it is looked for again.
	for attempt := 0; attempt < 64; attempt++ {
		lock := filepath.Join(gitDir, filepath.FromSlash(ref)) + ".lock"
		dir := filepath.Dir(lock)
		for dir != gitDir && !isDir(dir) {
			dir = filepath.Dir(dir)
		}
		if dir != filepath.Dir(lock) {
			lock = filepath.Join(dir, "readproof-preflight-"+strconv.FormatUint(rand.Uint64(), 36)+".lock")
		}
		err = lockfile.Probe(lock, lockfile.Options{Timeout: opts.LockTimeout, Deadline: deadline, StaleAge: opts.StaleLockAge,
			Holder: "another git or readproof", Task: "writing to the store", Wait: opts.LockWait})
		if !errors.Is(err, fs.ErrNotExist) {
			break
		}
	}
	switch {
	case errors.Is(err, lockfile.ErrLocked):
		return fmt.Errorf("%w: %w", ErrLocked, err)
	case err != nil:
		return fmt.Errorf("%w: %s: cannot take the lock of %s: %w", ErrNotWritable, gitDir, ref, err)
	}
	return nil
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
