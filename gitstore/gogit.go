package gitstore

import (
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/readproof/readproof/gitstore/gitobj"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
	"github.com/readproof/readproof/internal/text"

	"github.com/go-git/go-git/v5/plumbing"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// Options tune how a Store waits for ref locks. The zero value gives the
// defaults.
type Options struct {
	// LockTimeout is how long Update waits for a ref lock that someone else
	// holds before it fails with ErrLocked. Zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// StaleLockAge is the age (by modification time) after which a lock file
	// is taken to be left behind by a crashed process and is removed, if no
	// live process holds its flock (a readproof holds one on each lock it
	// holds, stopped or not; see breakStaleLock). Zero means
	// DefaultStaleLockAge.
	StaleLockAge time.Duration
	// Sharing is who may read a new store (InitWithOptions only; an open
	// store keeps what its config says). Zero means SharePrivate.
	Sharing Sharing
	// Warn, when set, is given what a command only tried and could not do
	// after its work was recorded (an error with a hint): a ref
	// transaction whose lock file could not be removed after its refs
	// moved. Nil: such failures are silent.
	Warn func(error)
	// LockWait, when set, hears once from each wait for a lock file that
	// another process holds (a ref's, packed-refs') once the wait has
	// lasted LockWaitNotice, and never when the lock comes free sooner.
	// Nil: waits are silent.
	LockWait func(LockWaitInfo)
	// LockWaitNotice is how long a wait lasts before LockWait hears of it.
	// Zero means DefaultLockWaitNotice.
	LockWaitNotice time.Duration
}

// LockWaitInfo is what Options.LockWait hears of a wait for a held lock:
// the lock file (Path), how long it has been held (Held), how much longer
// the writer waits at most (Left) and whether it then takes the lock over
// as left by a crashed process (Stale: it will be older than
// StaleLockAge) or fails with ErrLocked. Every lock wait of readproof is
// told in this form, and its String is the line a terminal shows.
type LockWaitInfo = progress.Wait

const (
	// DefaultLockTimeout is the LockTimeout used when Options leaves it zero.
	DefaultLockTimeout = 15 * time.Second
	// DefaultStaleLockAge is the StaleLockAge used when Options leaves it zero.
	DefaultStaleLockAge = 10 * time.Second
	// DefaultLockWaitNotice is the LockWaitNotice used when Options leaves
	// it zero.
	DefaultLockWaitNotice = progress.WaitNotice
)

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.StaleLockAge <= 0 {
		o.StaleLockAge = DefaultStaleLockAge
	}
	if o.LockWaitNotice <= 0 {
		o.LockWaitNotice = DefaultLockWaitNotice
	}
	return o
}

// ErrExists is returned (wrapped) by Init when the path already holds a
// readproof store.
var ErrExists = errors.New("store already exists")

// errClosed is returned by every method called after Close.
var errClosed = errors.New("store is closed")

// repo is the Store implementation: our own readers of loose objects and
// packs (odb.go) and our own code for refs; go-git's codecs for trees and
// commits.
type repo struct {
	path string // the git directory, absolute
	opts Options

	// syncMu is held from taking the pending list until its objects are
	// durable (or put back), so an Update that finds the list empty, because
	// a concurrent one took it, waits for that sync before renaming any ref
	// (sync.go). Taken before mu, never while holding it.
	syncMu sync.Mutex
	// mu guards st, pending and closed.
	mu sync.Mutex
	st *odb
	// Tests set what BlobTo reads whole (0: the defaults, streamFrom and
	// streamBaseInMemory; -1: nothing), and read basesSpilled, the delta
	// bases it wrote to a temporary file.
	wholeUpTo, baseUpTo int64
	basesSpilled        int
	pending             []string  // object files (relative, slash-separated) not yet synced
	perm                perms     // modes of new files, from core.sharedRepository
	sweptAt             time.Time // last sweep for stale temporary and lock files

	buf      map[plumbing.Hash]bufObj // objects not yet written (pack.go)
	bufOrder []plumbing.Hash
	bufBytes int
	spill    *spillFile // objects past the first few (pack.go)
	spillErr error      // a failed spill write, for the next flush
	hasher   hash.Hash  // putObject's object ids (computeHash)
	closed   bool
	// copied: objects a copy of this repository hashed, read before the
	// repository's own (OpenLocalSourceWith)
	copied *CopiedObjects
	// ownerChecked: Update has looked whether root writes into a store
	// another user owns (owner.go), which it does once per handle
	ownerChecked bool
	// fanout is what putObject found of each objects/xx directory since the
	// last flush: 0 not looked, fanoutAbsent, fanoutPresent (objects.go).
	fanout   [256]uint8
	fanLooks int // fan-out directories looked for since the last flush

	looseDirs []string // fan-out directories written since the last Update (maintain.go)
	// madeDirs counts the objects linked into each fan-out directory this
	// store created since the last Update (linkLoose), for estimateLoose.
	madeDirs map[byte]int
	autoPack int // loose objects past which a write packs them (maintain.go)
	// autoPackLimit: packs past which a write that made a small pack packs
	// the small ones (maintain.go); wroteSmall: a flush since the last
	// Update made one (writeSmallPack). smallPacks: the files of the small
	// packs pending, which flushForUpdate syncs with the lock files.
	autoPackLimit int
	wroteSmall    bool
	smallPacks    []string
	looseOnly     bool // tests: a few objects always go loose (smallPacksOn)

	marked         bool            // the config carried the readproof marker when opened (IsOpenStore)
	packsCheckedAt time.Time       // when the reader's pack list was last compared with the disk
	freshGen       uint64          // the reader's list of packs freshenPacked last saw (odb.gen; 0: none)
	freshUntil     time.Time       // until when that freshening holds
	freshCruft     map[string]bool // the cruft packs of that list (cruftPacks)

	// pmu guards packed, the parsed packed-refs file.
	pmu    sync.Mutex
	packed *packedRefs

	// beforeUnpack, when set (tests only), runs in packLoose after the new
	// pack is in place and before any loose file goes: the moment a git gc
	// must not be running (gcpid.go).
	beforeUnpack func()
	// whileSyncing, when set (tests only), runs while an Update holds
	// syncMu, with its pending objects taken and not yet synced.
	whileSyncing func()
}

// Init creates a store at path with default Options. See InitWithOptions.
func Init(path string) (Store, error) { return InitWithOptions(path, Options{}) }

// InitWithOptions creates a bare repository at path, laid out like
// `git init --bare` with HEAD on refs/heads/main, plus the marker
// `[readproof] store = 1` in its config, and opens it. The repository is built
// in a temporary directory beside path and renamed into place, so a crash
// leaves either nothing or a complete store. path may be missing or an empty
// directory; an existing store gives an error wrapping ErrExists.
func InitWithOptions(path string, opts Options) (Store, error) { return InitWith(path, opts, nil) }

// InitWith is InitWithOptions that first calls fill, when not nil, with
// the new store open in its temporary directory (closed after), and
// renames the directory into place only when fill succeeds: what fill
// writes (a store's first commit and ref) is there from the moment the
// store is, and a process killed before the rename leaves nothing at path.
// fill must make what it writes durable (Update does).
func InitWith(path string, opts Options, fill func(Store) error) (_ Store, err error) {
	// a failed init leaves no directory above path that it made (those
	// still empty: see removeEmptyDirs)
	made := missingDirs(filepath.Dir(path))
	defer func() {
		if err != nil {
			removeEmptyDirs(made)
		}
	}()
	abs, sharing, perm, err := prepareInit(path, opts)
	if err != nil {
		return nil, err
	}
	parent := filepath.Dir(abs)
	prefix := initPrefix(abs)
	sweepInitLeft(parent, prefix, opts.withDefaults().StaleLockAge)
	tmp, err := os.MkdirTemp(parent, prefix)
	if err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	// Held while the store is built there, so a concurrent init into the
	// same path does not take it for a killed one's (sweepInitLeft).
	release, err := holdScratch(tmp)
	if err != nil {
		os.Remove(tmp)
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	defer release()
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := buildRepo(tmp, sharing, perm, true); err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	if fill != nil {
		g, err := OpenWithOptions(tmp, opts)
		if err != nil {
			return nil, fmt.Errorf("init store %s: %w", path, err)
		}
		err = fill(g)
		if cerr := g.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("init store %s: %w", path, err)
		}
	}
	if err := placeStore(tmp, abs); err != nil {
		if errors.Is(err, ErrExists) {
			return nil, fmt.Errorf("init store %s: %w: open it instead", path, ErrExists)
		}
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	done = true
	if err := syncPlaced(abs, made); err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	return OpenWithOptions(abs, opts)
}

// initPrefix is the start of the name of the temporary directory an init
// of the store at abs builds in, beside it.
func initPrefix(abs string) string { return "." + filepath.Base(abs) + ".init-" }

// SweepInitLeft removes what a killed init of the store at path left
// beside it (see sweepInitLeft), for an init that finds the store made
// already.
func SweepInitLeft(path string, opts Options) {
	if abs, err := filepath.Abs(path); err == nil {
		sweepInitLeft(filepath.Dir(abs), initPrefix(abs), opts.withDefaults().StaleLockAge)
	}
}

// sweepInitLeft removes, from the directory parent, what a killed init
// left: a directory named prefix followed by digits (os.MkdirTemp's
// pattern), not a link, this user's, older than staleAge and whose flock nobody holds
// (an init in progress holds it; where there is no flock, a directory is
// taken for a killed init's once 12 hours old). Anything else by such a name
// is left alone, and a failure to remove one only leaves it, as before.
func sweepInitLeft(parent, prefix string, staleAge time.Duration) {
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		rest, ok := strings.CutPrefix(name, prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" || !e.IsDir() {
			continue
		}
		path := filepath.Join(parent, name)
		fi, err := os.Lstat(path)
		if err != nil || !fi.IsDir() || !ownDir(fi) || time.Since(fi.ModTime()) < staleAge {
			continue
		}
		sweepScratch(path, fi.ModTime())
	}
}

// initConfig is the config of a new store; core.sharedRepository records
// its Sharing, in the form stock git honours too.
func initConfig(sharing Sharing) string {
	return "[core]\n" +
		"\trepositoryformatversion = 0\n" +
		"\tfilemode = true\n" +
		"\tbare = true\n" +
		"\tsharedRepository = " + sharing.configValue() + "\n" +
		"[readproof]\n" +
		"\tstore = 1\n"
}

// buildRepo lays out a bare repository in dir and, when durable, makes it
// durable: every file and directory written is synced, in one batch
// (fsyncEach), before the caller renames dir into place. A staged store
// (InitStaged) is not synced here: Publish syncs everything in it before
// its rename, and nothing reads it as a store until then.
func buildRepo(dir string, sharing Sharing, perm perms, durable bool) error {
	if err := os.Chmod(dir, perm.dir()); err != nil {
		return err
	}
	dirs := []string{"objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags"}
	for _, d := range dirs {
		if err := perm.mkdirAll(filepath.Join(dir, d)); err != nil {
			return err
		}
	}
	files := []struct{ name, content string }{
		{"HEAD", "ref: refs/heads/main\n"},
		{"config", initConfig(sharing)},
		{"description", "readproof evidence store\n"},
		// Keeps the store out of an enclosing work tree (docs/store-format.md).
		{".gitignore", "*\n"},
	}
	var ts []syncTarget
	defer func() {
		for _, t := range ts {
			if t.f != nil {
				t.f.Close()
			}
		}
	}()
	for _, f := range files {
		w, err := writeFileOpen(filepath.Join(dir, f.name), []byte(f.content), perm)
		if err != nil {
			return err
		}
		ts = append(ts, syncTarget{f: w})
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		ts = append(ts, syncTarget{path: filepath.Join(dir, dirs[i]), dir: true})
	}
	ts = append(ts, syncTarget{path: dir, dir: true})
	if durable {
		if err := fsyncEach(ts); err != nil {
			return err
		}
	}
	for i, t := range ts {
		if t.f != nil {
			err := t.f.Close()
			ts[i].f = nil
			if err != nil {
				return err
			}
		}
	}
	return nil
}

// writeFileOpen creates name with data and returns it still open, for the
// caller to sync and close.
func writeFileOpen(name string, data []byte, perm perms) (*os.File, error) {
	f, err := perm.create(name, perm.file())
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func isEmptyDir(dir string) (bool, error) {
	f, err := os.Open(dir)
	if err != nil {
		return false, err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	if errors.Is(err, io.EOF) {
		return true, nil
	}
	return len(names) == 0, err
}

// Open opens the git repository at path with default Options. See
// OpenWithOptions.
func Open(path string) (Store, error) { return OpenWithOptions(path, Options{}) }

// OpenWithOptions opens a bare repository at path, or the repository of the
// work tree at path (path/.git). It does not require the readproof marker
// (see IsStore). A path that holds no git repository gives an error wrapping
// ErrNotStore.
func OpenWithOptions(path string, opts Options) (Store, error) {
	gitdir, err := findGitDir(path)
	if err != nil {
		return nil, err
	}
	cfg, err := checkFormat(gitdir)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	perm := permsFromConfig(cfg)
	// Loose objects are written through a temporary file in objects/pack;
	// createTemp makes the directory when it is missing, so opening the
	// store does not look for it.
	st := newODB(filepath.Join(gitdir, "objects"))
	return &repo{path: gitdir, opts: opts.withDefaults(), st: st, perm: perm, autoPack: autoPackFromConfig(cfg), autoPackLimit: autoPackLimitFromConfig(cfg), marked: hasMarker(cfg)}, nil
}

// IsStore reports whether path holds a git repository created by Init (its
// config carries `[readproof] store = 1`).
func IsStore(path string) bool {
	gitdir, err := findGitDir(path)
	if err != nil {
		return false
	}
	cfg, err := readConfig(gitdir)
	if err != nil {
		return false
	}
	return hasMarker(cfg)
}

// IsOpenStore is IsStore for a store already open: what its config said
// when it was opened, without finding and reading the repository again.
// A Store of another kind is asked IsStore of its path.
func IsOpenStore(s Store) bool {
	if r, ok := s.(*repo); ok {
		return r.marked
	}
	return IsStore(s.Path())
}

// ErrIncompleteClone: the repository is a copy of a store that stock git
// made without some of its objects (a shallow or a partial clone). readproof
// reads objects itself and fetches none, so it cannot check or replay what
// such a copy lacks.
var ErrIncompleteClone = errors.New("an incomplete clone")

// ErrShallowClone and ErrPartialClone tell IncompleteClone's two cases
// apart (both are ErrIncompleteClone, and read as it does): a shallow
// clone (git clone --depth) and a partial one (git clone --filter).
var (
	ErrShallowClone error = incompleteClone{"shallow"}
	ErrPartialClone error = incompleteClone{"partial"}
)

type incompleteClone struct{ kind string }

func (incompleteClone) Error() string { return ErrIncompleteClone.Error() }
func (incompleteClone) Unwrap() error { return ErrIncompleteClone }

// IncompleteClone returns an error wrapping ErrIncompleteClone, with a hint,
// when the repository of the open store s is a shallow clone (git clone
// --depth: a shallow file) or a partial clone (git clone --filter: a
// promisor remote, or extensions.partialclone), else nil. It reads the
// config again: call it only for a repository without readproof's marker,
// a copy made by stock git, so that opening a store pays nothing for it.
func IncompleteClone(s Store) error {
	dir := s.Path()
	q := text.ShellArg(dir)
	get := "clone the store whole instead: git clone --mirror URL (the store's URL: git -C " + q + " remote get-url origin)"
	if _, err := os.Stat(filepath.Join(dir, "shallow")); err == nil {
		return hint.With(fmt.Errorf("%s is a shallow clone (git clone --depth): %w that holds only the newest commits, so the runs, observations and journal history readproof checks are not there", dir, ErrShallowClone),
			get)
	}
	cfg, err := readConfig(dir)
	if err != nil {
		return nil // the open already read it; nothing more to say
	}
	promisor := strings.TrimSpace(cfg.Section("extensions").Options.Get("partialclone"))
	for _, r := range cfg.Section("remote").Subsections {
		switch strings.ToLower(strings.TrimSpace(r.Options.Get("promisor"))) {
		case "true", "yes", "on", "1":
			if promisor == "" {
				promisor = r.Name
			}
		}
	}
	if promisor != "" {
		return hint.With(fmt.Errorf("%s is a partial clone (git clone --filter): %w whose objects git left with remote %s; readproof reads every object itself and fetches none, so it cannot check or replay the runs", dir, ErrPartialClone, text.Printable(promisor)),
			get)
	}
	return nil
}

func hasMarker(cfg *gitconfig.Config) bool {
	return cfg != nil && strings.TrimSpace(cfg.Section("readproof").Options.Get("store")) == "1"
}

// findGitDir returns the absolute git directory for path: path itself when it
// is a repository directory, else path/.git (a directory, or a file with a
// "gitdir:" line).
func findGitDir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	// A git directory is recognised first: the stat that tells a missing
	// path from one that holds no repository is needed only when it is not.
	if gitobj.IsGitDir(abs) {
		return abs, nil
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("open store %s: %w: the directory does not exist; create it with init", path, ErrNotStore)
		}
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	dotgit := filepath.Join(abs, ".git")
	if fi, err := os.Stat(dotgit); err == nil {
		if fi.IsDir() && gitobj.IsGitDir(dotgit) {
			return dotgit, nil
		}
		if fi.Mode().IsRegular() {
			data, err := os.ReadFile(dotgit)
			if err == nil {
				line := strings.TrimSpace(string(data))
				if rest, ok := strings.CutPrefix(line, "gitdir:"); ok {
					target := strings.TrimSpace(rest)
					if !filepath.IsAbs(target) {
						target = filepath.Join(abs, target)
					}
					if gitobj.IsGitDir(target) {
						return filepath.Clean(target), nil
					}
				}
			}
		}
	}
	return "", fmt.Errorf("open store %s: %w: no git repository there; create one with init", path, ErrNotStore)
}

func readConfig(gitdir string) (*gitconfig.Config, error) {
	f, err := openRead(filepath.Join(gitdir, "config"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg := gitconfig.New()
	if err := gitconfig.NewDecoder(f).Decode(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(gitdir, "config"), err)
	}
	return cfg, nil
}

// checkFormat refuses repositories whose format this package cannot read or
// write correctly. It returns the config it read (nil when there is none).
func checkFormat(gitdir string) (*gitconfig.Config, error) {
	cfg, err := readConfig(gitdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // git accepts a repository without config
	}
	if err != nil {
		return nil, fmt.Errorf("read config: %w: repair or remove the config file", err)
	}
	version := strings.TrimSpace(cfg.Section("core").Options.Get("repositoryformatversion"))
	switch version {
	case "", "0":
		return cfg, nil
	case "1":
	default:
		return nil, fmt.Errorf("repository format version %s is not supported: use a repository made by git init", version)
	}
	ext := cfg.Section("extensions").Options
	if f := strings.ToLower(strings.TrimSpace(ext.Get("objectformat"))); f != "" && f != "sha1" {
		return nil, fmt.Errorf("object format %s is not supported: readproof stores use sha1 repositories", f)
	}
	if r := strings.ToLower(strings.TrimSpace(ext.Get("refstorage"))); r != "" && r != "files" {
		return nil, fmt.Errorf("ref storage %s is not supported: readproof stores use the files ref backend", r)
	}
	return cfg, nil
}

// Path returns the git directory.
func (s *repo) Path() string { return s.path }

// Close releases the repository's open files.
func (s *repo) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	ferr := s.flush()
	s.closed = true
	if err := s.st.Close(); err != nil {
		return err
	}
	return ferr
}

// packCheckEvery bounds how often putObject lists objects/pack.
const packCheckEvery = 100 * time.Millisecond

// refreshPacks makes the object reader take a new list of the packs when
// the set of packs changed (git gc or repack ran). A reader that has not
// listed them yet (or was told to list them again) lists them at its next
// lookup, so it is left alone; otherwise the listing made here to compare
// is the reader's new list. Called with s.mu held.
//
// It returns the listing it took (nil when it took none), which a caller
// about to list objects/pack again at once may use instead.
func (s *repo) refreshPacks() []os.DirEntry {
	if time.Since(s.packsCheckedAt) < packCheckEvery {
		return nil
	}
	s.packsCheckedAt = time.Now()
	if !s.st.scanned {
		return nil
	}
	entries, err := s.readPackDir()
	if idxListing(entries) != s.st.listing {
		s.st.Reindex()
		s.st.scanFrom(entries, err)
	}
	if err != nil {
		return nil
	}
	return entries
}
