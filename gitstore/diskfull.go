package gitstore

import (
	"errors"
	"io"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/diskfull"
	"github.com/readproof/readproof/internal/hint"
)

// ErrDiskFull is wrapped by a write that failed because the file system
// holding the store is full (ENOSPC) or the user's quota is used up
// (EDQUOT). errors.Is(err, syscall.ENOSPC) holds as well for a full disk.
var ErrDiskFull = errors.New("no space left for the store")

// diskError marks err, when the disk is full, with ErrDiskFull and a hint.
// Other errors are returned unchanged.
func diskError(err error) error {
	if err == nil || !diskfull.Is(err) || errors.Is(err, ErrDiskFull) {
		return err // not a full disk, or already marked
	}
	return hint.With(&diskFull{err}, "nothing was recorded by the failed write, and its temporary files were removed; "+WriteLimitRemedy(err, "the store")+", then retry")
}

// WriteLimitRemedy says, for err, a write on this machine (in Go, or by a
// git this process ran) that hit a limit, what happened and what to do, as
// one clause for the caller's own sentence, between what was kept and what
// to run again: for a full disk or quota (OutOfSpace) "the file system that
// holds <where> is full (or the quota is used up); free space on it (df
// shows it)", for the file size limit (FileSizeLimited) "a file passed the
// file size limit (the shell's `ulimit -f`); raise it (ulimit -f
// unlimited)", naming the file system's own largest file as well for EFBIG.
// It returns "" for any other error.
func WriteLimitRemedy(err error, where string) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, syscall.EFBIG):
		return "a file passed the file size limit (the shell's `ulimit -f`) or the largest file the file system allows; raise the limit (ulimit -f unlimited)"
	case FileSizeLimited(err):
		return "a file passed the file size limit (the shell's `ulimit -f`); raise it (ulimit -f unlimited)"
	case OutOfSpace(err):
		return "the file system that holds " + where + " is full (or the quota is used up); free space on it (df shows it)"
	}
	return ""
}

type diskFull struct{ err error }

func (d *diskFull) Error() string   { return "the disk is full: " + d.err.Error() }
func (d *diskFull) Unwrap() []error { return []error{ErrDiskFull, d.err} }

// createTemp is os.CreateTemp in dir (a new file named pattern followed by
// random digits, mode 0600, open for reading and writing), opened with
// openNoPoll, creating dir with the store's directory mode when it is
// missing (a store git made may lack objects/pack; the common case costs
// no extra system call).
func (s *repo) createTemp(dir, pattern string) (*os.File, error) {
	f, err := createTempIn(dir, pattern)
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if err := s.perm.mkdirAll(dir); err != nil {
		return nil, err
	}
	return createTempIn(dir, pattern)
}

func createTempIn(dir, pattern string) (*os.File, error) {
	for try := 0; ; try++ {
		name := filepath.Join(dir, pattern+strconv.FormatUint(uint64(mrand.Uint32()), 10))
		f, err := openNoPoll(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}

// tmpWriter is f, or with a test's writeFault set, a writer whose writes
// fail as that fault says.
func tmpWriter(f *os.File) io.Writer {
	if writeFault != nil {
		if err := writeFault(f.Name()); err != nil {
			return faultyWriter{&os.PathError{Op: "write", Path: f.Name(), Err: err}}
		}
	}
	return f
}

type faultyWriter struct{ err error }

func (w faultyWriter) Write([]byte) (int, error) { return 0, w.err }

// writeFault, when a test sets it, is asked about each temporary file the
// store writes (tmp_obj_*, tmp_pack_*, tmp_idx_*); a non-nil error (such as
// syscall.ENOSPC) makes every write to that file fail, as on a full disk.
var writeFault func(name string) error

// sweepEvery bounds how often the stores' refs/ is walked for stale lock
// files, across processes (SweepStamp's modification time): every CLI
// command is a new process, and the walk grows with the number of loose
// refs (about 17 ms per write at 10,000 run tags).
const sweepEvery = time.Minute

// SweepStamp is the file in the store whose modification time says when
// refs/ was last swept for stale locks (docs/store-format.md).
const SweepStamp = "readproof-swept"

// sweepStale removes what a killed writer leaves behind, older than the
// stale-lock age: temporary object files (tmp_obj_*, tmp_pack_*, tmp_idx_*
// in objects/ and objects/pack/; stock git's, tmp_pack_XXXXXX and the like,
// only once older than gitTempAge, since a live git fetch may leave its
// file unwritten for long), lock files (*.lock at the top of the
// store and under refs/) and the scratch directories of killed pulls and
// clones (readproof-fetch-* and readproof-probe-* at the top, whose flock
// nobody holds). The fixed-size places are read on every call;
// refs/ is walked when one of them held something stale (a writer was
// killed) or the last walk, by any process, is older than sweepEvery.
// Called after a successful write, with s.mu held.
func (s *repo) sweepStale() {
	now := time.Now()
	if now.Sub(s.sweptAt) < sweepEvery {
		return
	}
	s.sweptAt = now
	old := func(fi os.FileInfo) bool { return now.Sub(fi.ModTime()) > s.opts.StaleLockAge }
	crashed := false
	for _, dir := range []string{filepath.Join(s.path, "objects", "pack"), filepath.Join(s.path, "objects")} {
		entries, _ := readDir(dir)
		for _, e := range entries {
			n := e.Name()
			if e.IsDir() || !(strings.HasPrefix(n, "tmp_obj_") || strings.HasPrefix(n, "tmp_pack_") || strings.HasPrefix(n, "tmp_idx_")) {
				continue
			}
			fi, err := e.Info()
			if err != nil || !old(fi) {
				continue
			}
			if isGitTemp(n) && now.Sub(fi.ModTime()) <= gitTempAge {
				// stock git's (a concurrent fetch's index-pack): it
				// can go unwritten for long while the git lives
				continue
			}
			os.Remove(filepath.Join(dir, n))
			crashed = true
		}
	}
	removeLock := func(path string) {
		fi, err := os.Lstat(path)
		if err == nil && fi.Mode().IsRegular() && old(fi) {
			s.breakStaleLock(path)
			crashed = true
		}
	}
	if entries, err := readDir(s.path); err == nil {
		for _, e := range entries {
			switch {
			case strings.HasSuffix(e.Name(), ".lock"):
				removeLock(filepath.Join(s.path, e.Name()))
			case e.IsDir() && isScratch(e.Name()):
				if fi, err := e.Info(); err == nil && old(fi) && sweepScratch(filepath.Join(s.path, e.Name()), fi.ModTime()) {
					crashed = true
				}
			}
		}
	}
	stamp := filepath.Join(s.path, SweepStamp)
	if fi, err := os.Stat(stamp); err == nil && !crashed && now.Sub(fi.ModTime()) < sweepEvery {
		return
	}
	filepath.WalkDir(filepath.Join(s.path, "refs"), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".lock") {
			removeLock(path)
		}
		return nil
	})
	if err := os.Chtimes(stamp, now, now); errors.Is(err, fs.ErrNotExist) {
		if f, err := s.perm.create(stamp, s.perm.file()); err == nil {
			f.Close()
		}
	}
}
