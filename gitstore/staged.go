package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// ErrStagingBusy is returned by InitStaged when another process is making
// a store at the same path (its staging directory is held), or one was
// killed doing so less than the stale-lock age ago.
var ErrStagingBusy = errors.New("another clone into it is under way")

// ErrStagingInTheWay is returned by InitStaged when something other than a
// directory has the staging directory's name.
var ErrStagingInTheWay = errors.New("in the way of the staging directory: not a directory readproof made")

// ErrPublishedUnsynced is returned by Publish when the store was renamed
// into place and only the sync of the directory that holds it failed: the
// store is there (Discard leaves it), its name may not survive a crash.
var ErrPublishedUnsynced = errors.New("the store is in place, but its directory could not be synced")

// Staged is a store made in a staging directory beside its final path and
// moved there whole by Publish: until then nothing is at the path, so a
// process killed while it makes the store (fetches into it, checks what it
// fetched) leaves no store there, verified or not. The embedded Store is
// open at the staging directory; nothing in a store records its own path,
// so it reads the same at the final path.
type Staged struct {
	Store
	path    string // the final path, absolute
	dir     string // the staging directory
	release func() // drops the staging directory's flock
	ended   bool
	// made are the directories above path this clone made (deepest
	// first): Discard removes those left empty
	made []string
}

// StagingDir is the staging directory of a store made at path by
// InitStaged: ".NAME.clone" beside it, NAME being path's last element.
func StagingDir(path string) string {
	return filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".clone")
}

// InitStaged makes a new store for path (missing, or an empty directory)
// in its staging directory (StagingDir), as InitWithOptions lays one out,
// and opens it there. The staging directory is made with mkdir, so two
// processes cannot both have it, and flocked for as long as it is in use
// (a process killed while it holds it leaves it, and the kernel drops the
// lock). One that is there already is removed when nobody holds its lock
// and it is older than the stale-lock age (the moment between its mkdir
// and its flock): a killed clone's; otherwise InitStaged fails with
// ErrStagingBusy. An existing store at path gives ErrExists. The caller
// ends with Publish or Discard.
func InitStaged(path string, opts Options) (*Staged, error) {
	made := missingDirs(filepath.Dir(path))
	abs, sharing, perm, err := prepareInit(path, opts)
	if err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	dir := StagingDir(abs)
	release, err := makeStaging(dir, opts.StaleLockAge)
	if err != nil {
		removeEmptyDirs(made)
	}
	if errors.Is(err, ErrStagingBusy) {
		return nil, err
	} else if err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	s := &Staged{path: abs, dir: dir, release: release, made: made}
	if err := buildRepo(dir, sharing, perm, false); err != nil {
		s.Discard()
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	g, err := OpenWithOptions(dir, opts)
	if err != nil {
		s.Discard()
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	s.Store = g
	return s, nil
}

// makeStaging makes the staging directory dir (mode 0700) and takes its
// flock, first removing one a killed process left (nobody holds its lock,
// older than staleAge).
func makeStaging(dir string, staleAge time.Duration) (release func(), err error) {
	for try := 0; ; try++ {
		err := os.Mkdir(dir, 0o700)
		if err == nil {
			release, err := holdScratch(dir)
			// A process that found it made (another clone into the same
			// path) holds its lock for a moment, to see whether it is a
			// killed clone's, and lets go when it finds it too young.
			for wait := 0; err != nil && wait < 100; wait++ {
				time.Sleep(time.Millisecond)
				release, err = holdScratch(dir)
			}
			if err != nil {
				os.Remove(dir)
				return nil, fmt.Errorf("%w (its staging directory %s is in use)", ErrStagingBusy, dir)
			}
			return release, nil
		}
		if !errors.Is(err, fs.ErrExist) || try > 0 {
			return nil, err
		}
		fi, lerr := os.Lstat(dir)
		if lerr != nil {
			return nil, err
		}
		if !fi.IsDir() || !ownDir(fi) || !looksStaged(dir) {
			return nil, fmt.Errorf("%s is %w", dir, ErrStagingInTheWay)
		}
		// Its lock, then its identity and age as the locked descriptor
		// sees them: a directory another clone made there since the lstat
		// (after removing the one lstat saw) is not taken for that one.
		held, cur, ok := lockSameDir(dir, fi)
		if !ok {
			return nil, fmt.Errorf("%w (its staging directory %s is in use)", ErrStagingBusy, dir)
		}
		if time.Since(cur.ModTime()) < staleAge {
			held()
			return nil, fmt.Errorf("%w (its staging directory %s is in use)", ErrStagingBusy, dir)
		}
		// a killed clone's: removed while its lock is held here
		rerr := os.RemoveAll(dir)
		held()
		if rerr != nil {
			return nil, fmt.Errorf("remove a killed clone's %s: %w", dir, rerr)
		}
	}
}

// looksStaged reports whether dir, a directory by a staging directory's
// name, holds what a clone killed there leaves: nothing (killed at once),
// or the start of a repository (HEAD, config, objects or refs). Anything
// else (a directory of the user's by that name) is not removed.
func looksStaged(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	if len(entries) == 0 {
		return true
	}
	for _, e := range entries {
		switch e.Name() {
		case "HEAD", "config", "objects", "refs":
			return true
		}
	}
	return false
}

// prepareInit is what every way of making a store at path does first: it
// makes path absolute, checks it (checkInitTarget), makes its parent
// directory, and returns the new store's sharing (SharePrivate when opts
// leaves it empty) and file modes.
func prepareInit(path string, opts Options) (abs string, sharing Sharing, perm perms, err error) {
	if path == "" {
		return "", "", perms{}, errors.New("init store: empty path: name the directory to create")
	}
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", perms{}, fmt.Errorf("init store %s: %w", path, err)
	}
	if err := checkInitTarget(abs, path); err != nil {
		return "", "", perms{}, err
	}
	sharing = opts.Sharing
	if sharing == "" {
		sharing = SharePrivate
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o777); err != nil {
		return "", "", perms{}, fmt.Errorf("init store %s: %w", path, err)
	}
	return abs, sharing, perms{group: sharing == ShareGroup}, nil
}

// checkInitTarget checks that abs (path, made absolute) is missing or an
// empty directory, and not a store.
func checkInitTarget(abs, path string) error {
	fi, err := os.Stat(abs)
	switch {
	case err == nil:
		const elsewhere = "choose a new or empty directory for the store; nothing was written there"
		if !fi.IsDir() {
			return hint.With(fmt.Errorf("init store %s: the path is a file, not a directory", path), elsewhere)
		}
		if IsStore(abs) {
			return fmt.Errorf("init store %s: %w: open it instead", path, ErrExists)
		}
		if empty, err := isEmptyDir(abs); err != nil {
			return fmt.Errorf("init store %s: %w", path, err)
		} else if !empty {
			if _, err := findGitDir(abs); err == nil {
				return hint.With(fmt.Errorf("init store %s: the directory is a git repository but not a readproof store", path), "readproof writes only to its own stores: "+elsewhere)
			}
			return hint.With(fmt.Errorf("init store %s: the directory is not empty and is not a readproof store", path), elsewhere)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return fmt.Errorf("init store %s: %w", path, err)
	}
	return nil
}

// Publish closes the store, makes every file and directory in the staging
// directory durable, renames it to the final path (over an empty directory
// there, which it replaces: the store has a new store's mode) and syncs the
// directory that holds it. On failure the caller calls Discard, which
// removes the staging directory unless the rename was done (only the sync
// of the directory failed: the store stays, and the error says so).
func (s *Staged) Publish() error {
	if s.ended {
		return errors.New("publish store: already ended")
	}
	if err := s.Store.Close(); err != nil {
		return fmt.Errorf("publish store %s: %w", s.path, err)
	}
	var ts []syncTarget
	err := filepath.WalkDir(s.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		ts = append(ts, syncTarget{path: p, dir: d.IsDir()})
		return nil
	})
	if err == nil {
		err = fsyncEach(ts)
	}
	if err != nil {
		return fmt.Errorf("publish store %s: %w", s.path, err)
	}
	if err := placeStore(s.dir, s.path); err != nil {
		return fmt.Errorf("publish store %s: %w", s.path, err)
	}
	s.ended = true
	s.release()
	if err := syncPlaced(s.path, s.made); err != nil {
		return fmt.Errorf("publish store %s: %w: %w", s.path, ErrPublishedUnsynced, err)
	}
	return nil
}

// DropObjects removes every object file of the staged store (the packs,
// indexes and temporary files a copy wrote, loose objects) and keeps its
// directories: for a clone whose copy came from a source it then does not
// take. Nothing may have read objects through the store since they were
// written.
func (s *Staged) DropObjects() error {
	objects := filepath.Join(s.dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return fmt.Errorf("drop objects of %s: %w", s.path, err)
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == "pack":
			files, err := os.ReadDir(filepath.Join(objects, name))
			if err != nil {
				return fmt.Errorf("drop objects of %s: %w", s.path, err)
			}
			for _, f := range files {
				if err := os.RemoveAll(filepath.Join(objects, name, f.Name())); err != nil {
					return fmt.Errorf("drop objects of %s: %w", s.path, err)
				}
			}
		case len(name) == 2 && strings.Trim(name, "0123456789abcdef") == "":
			if err := os.RemoveAll(filepath.Join(objects, name)); err != nil {
				return fmt.Errorf("drop objects of %s: %w", s.path, err)
			}
		}
	}
	return nil
}

// Discard closes the store and removes the staging directory, unless
// Publish moved it into place.
func (s *Staged) Discard() {
	if s.ended {
		return
	}
	s.ended = true
	if s.Store != nil {
		s.Store.Close()
	}
	os.RemoveAll(s.dir)
	s.release()
	removeEmptyDirs(s.made)
}

// syncPlaced makes the name of a store just placed at path durable: the
// directory that holds it, and the directory that holds each directory of
// made (those above path that the init or clone made, deepest first), or
// a crash could lose one of them, and the store with it.
func syncPlaced(path string, made []string) error {
	ts := []syncTarget{{path: filepath.Dir(path), dir: true}}
	for _, d := range made {
		ts = append(ts, syncTarget{path: filepath.Dir(d), dir: true})
	}
	return fsyncEach(ts)
}

// missingDirs lists dir and those of its parents that do not exist, deepest
// first: what os.MkdirAll(dir) would make.
func missingDirs(dir string) []string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil
	}
	var out []string
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// removeEmptyDirs removes the directories of made (deepest first) that are
// empty: a failed clone leaves no directory it made, and never one that
// something else has written into meanwhile (os.Remove refuses those).
func removeEmptyDirs(made []string) {
	for _, d := range made {
		if os.Remove(d) != nil {
			return
		}
	}
}

// placeStore renames the finished store dir onto path, which is missing or
// an empty directory: rename(2) replaces an empty directory at once
// (os.Rename would refuse it, and removing it first leaves neither for a
// moment); where that is not allowed (Windows) the empty directory is
// removed first. A store that another process placed at path meanwhile is
// ErrExists.
func placeStore(dir, path string) error {
	err := renameFile(dir, path)
	if err == nil {
		return nil
	}
	if IsStore(path) {
		return ErrExists
	}
	if empty, _ := isEmptyDir(path); !empty || os.Remove(path) != nil || os.Rename(dir, path) != nil {
		return err
	}
	return nil
}
