// Package store is readproof's record: resources and their observations,
// tags, open runs and committed manifests, kept in a dedicated bare git
// repository through package gitstore. It is the one internal API that the
// CLI and the MCP server both call, so the two cannot drift.
//
// The layout it writes is specified in docs/store-format.md. Every write
// builds all objects first and then moves refs in one compare-and-swap
// transaction; a conflicting writer rebuilds on the new tip and tries again,
// so concurrent processes lose nothing.
package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// Ref namespace (docs/store-format.md).
const (
	RunsPrefix      = "refs/tags/readproof/runs/"
	OpenPrefix      = "refs/heads/readproof/open/"
	ResourcesPrefix = "refs/heads/readproof/resources/"
	TagsPrefix      = "refs/heads/readproof/tags/"
	JournalRef      = "refs/heads/main"
	// ConflictRunsPrefix + <run-id>/<manifest-id>: another manifest committed
	// under a run id this store uses for a different manifest, found by a
	// pull (internal/share writes and removes these refs). Local only: never
	// pushed, and ignored on a remote (older versions pushed them); removed
	// once a run ref names the manifest.
	ConflictRunsPrefix = "refs/tags/readproof/conflicts/runs/"
)

// ConflictRunRef is the conflict ref that keeps manifest m of run id run
// (ConflictRunsPrefix).
func ConflictRunRef(run string, m gitstore.OID) string {
	return ConflictRunsPrefix + run + "/" + string(m)
}

// Errors matched with errors.Is by callers.
var (
	ErrNotInitialized = errors.New("no readproof store")
	ErrExists         = errors.New("a readproof store already exists")
	ErrUnknownRun     = errors.New("unknown run")
	ErrUnknownTag     = errors.New("unknown tag")
	ErrNotRegistered  = errors.New("resource not registered")
	ErrUnknownTarget  = errors.New("no such run or manifest")
	ErrRunCommitted   = errors.New("run already committed")
	ErrRunOpen        = errors.New("run already open")
	ErrRunCaller      = errors.New("the run belongs to another caller")
	ErrNoSnapshot     = errors.New("no snapshot")
	ErrMismatch       = errors.New("replay mismatch")
	ErrBusy           = errors.New("store busy")
)

// Options tune a Store.
type Options struct {
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SignCommit, when set, signs every manifest commit: it receives the
	// commit payload (gitstore.CommitPayload) and returns the armored
	// signature for the gpgsig header.
	SignCommit func(payload []byte) (string, error)
	// OpenSource builds adapters; nil means adapters.Open.
	OpenSource func(adapters.Spec, adapters.Env) (adapters.Source, error)
	// Git tunes ref locking.
	Git gitstore.Options
	// Caller names who this store handle writes for (an MCP token's name,
	// identity.ValidateCaller); it is recorded in the manifests and tag
	// moves written through it. "" records none.
	Caller string
}

// Store is an open readproof store.
type Store struct {
	git    gitstore.Store
	policy *policy.Lazy
	opts   Options

	mu      sync.Mutex
	sources map[string]adapters.Source

	warnMu     sync.Mutex
	warned     map[string]bool // the sources' warnings said, each said once
	sourceWarn func(error)     // SetSourceWarn's; nil: Options.Git.Warn

	// viewWalk, when tests set it, replaces viewShortWalk (negative: 0).
	viewWalk int
}

// viewBuilder is the builder of the journal views this store writes into
// g: it keeps the document index in the store's ViewDocsFile.
func (s *Store) viewBuilder(g gitstore.Store) viewBuilder {
	return writingBuilder(g).withDocs(fileDocs{path: filepath.Join(s.Path(), ViewDocsFile)}, walkBudget(s.viewWalk))
}

// walkBudget is viewShortWalk, or a test's budget set (negative: 0).
func walkBudget(set int) int {
	if set == 0 {
		return viewShortWalk
	}
	return max(set, 0)
}

// DefaultPath is the store beside the policy file.
func DefaultPath(policyDir string) string { return filepath.Join(policyDir, ".readproof") }

// Init creates a private store at path (gitstore.SharePrivate), with its
// IgnoreFile. An existing store gives an error wrapping ErrExists
// (EnsureIgnored updates an older one).
func Init(path string) error { return InitShared(path, gitstore.SharePrivate) }

// InitShared creates a store at path, with its IgnoreFile, whose files only
// its owner (gitstore.SharePrivate) or also its group (gitstore.ShareGroup)
// may read. An existing store gives an error wrapping ErrExists.
func InitShared(path string, sharing gitstore.Sharing) error {
	return InitWith(path, gitstore.Options{Sharing: sharing})
}

// InitWith is InitShared with the gitstore options of the new store: its
// Sharing, and the stale-lock age after which a temporary directory a
// killed init left beside path is removed.
func InitWith(path string, opts gitstore.Options) error {
	if gitstore.IsStore(path) {
		// an init killed before this store was made may have left its
		// temporary directory beside it
		gitstore.SweepInitLeft(path, opts)
		return hint.With(fmt.Errorf("%w at %s", ErrExists, path), "nothing to do: the store is ready to use (`readproof run list` lists its runs, `readproof verify` checks it)")
	}
	// The journal starts with a root commit, so that every later journal
	// commit has the previous one as first parent and the manifest second.
	// It is written before the store is renamed into place (InitWith): a
	// process killed in between leaves no store, rather than one without
	// its root commit, which later commands took as a store and whose
	// first run then had no journal to follow.
	g, err := gitstore.InitWith(path, opts, func(g gitstore.Store) error {
		empty, err := g.PutTree(nil)
		if err != nil {
			return err
		}
		sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Now().UTC()}
		root, err := g.PutCommit(gitstore.Commit{Tree: empty, Author: sig, Committer: sig, Message: "initialize readproof store\n\nReadproof-Store: 1\n"})
		if err != nil {
			return err
		}
		return g.Update(gitstore.RefUpdate{Name: JournalRef, New: root})
	})
	if err != nil {
		return initFailed(path, fmt.Errorf("create store %s: %w", path, err))
	}
	return g.Close()
}

// initFailed gives err, an init that failed writing, the hint its errno
// calls for when it has none: gitstore.InitWith leaves nothing at path.
func initFailed(path string, err error) error {
	var errno syscall.Errno
	if hint.Of(err) != "" || errors.Is(err, fs.ErrPermission) {
		return err // the hint it has, or the CLI's for permissions
	}
	what := gitstore.WriteLimitRemedy(err, "it")
	if what == "" {
		if !errors.As(err, &errno) {
			return err
		}
		what = "check the file system that holds it (a read-only mount, or an I/O error: dmesg may say why)"
	}
	return hint.With(err, "nothing was made at "+path+" (its temporary directory was removed): "+what+", then run the same init command again (with the same --store and --config)")
}

// Open opens the store at path. pol may be nil when no policy file exists;
// resolving an unpinned, untagged URI then fails with ErrNotRegistered.
//
// path is a store made by Init (its config carries the marker), or a copy of
// one made by stock git (its journal starts at a store's root commit); a
// plain `git clone` is then read through its remote-tracking refs and
// refuses writes with ErrReadOnlyView. Any other git repository gives
// ErrNotAStore, and a path holding no repository ErrNotInitialized.
func Open(path string, pol *policy.File, opts Options) (*Store, error) {
	if pol == nil {
		return OpenLazy(path, nil, opts)
	}
	return OpenLazy(path, policy.Loaded(pol), opts)
}

// OpenLazy is Open with a policy file read on first use: a command that
// never resolves, lists or describes a declared resource never reads it,
// and one that does gets the policy's error (as returned by pol's loader)
// from the call that needed it. pol may be nil, as in Open.
func OpenLazy(path string, pol *policy.Lazy, opts Options) (*Store, error) {
	notInit := hint.With(fmt.Errorf("%w at %s", ErrNotInitialized, path),
		"run `readproof init` first, or point --store / READPROOF_STORE at an existing store or a clone of one")
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return nil, unreadable(path, err)
	case err != nil:
		return nil, notInit
	case !fi.IsDir():
		return nil, hint.With(fmt.Errorf("%w at %s: it is a file, not a directory", ErrNotInitialized, path),
			"point --store / READPROOF_STORE at the store's directory (by default .readproof beside readproof.toml)")
	}
	g, err := gitstore.OpenWithOptions(path, opts.Git)
	if errors.Is(err, gitstore.ErrNotStore) {
		// a directory this user may not list or enter looks empty to git
		if _, err := os.Stat(filepath.Join(path, "HEAD")); errors.Is(err, fs.ErrPermission) {
			return nil, unreadable(path, err)
		}
		if f, err := os.Open(path); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return nil, unreadable(path, err)
			}
		} else {
			names, err := f.Readdirnames(1)
			f.Close()
			if errors.Is(err, fs.ErrPermission) {
				return nil, unreadable(path, err)
			}
			if len(names) > 0 {
				if err := damagedStore(path); err != nil {
					return nil, err
				}
				// other files: init refuses the directory too
				return nil, hint.With(fmt.Errorf("%w at %s: the directory is not empty and is not a readproof store", ErrNotInitialized, path), NotOursHint)
			}
		}
		return nil, notInit
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	if !gitstore.IsOpenStore(g) {
		// No marker: only a copy of a store made by stock git is accepted,
		// and a plain clone is read through its remote-tracking refs. A
		// shallow or partial copy lacks objects readproof reads: said
		// before anything reads it and takes the gap for damage.
		if err := gitstore.IncompleteClone(g); err != nil {
			g.Close()
			return nil, fmt.Errorf("open store %s: %w", path, err)
		}
		view, err := recognise(g, path)
		if err != nil {
			g.Close()
			return nil, err
		}
		g = view
	}
	if pol == nil {
		pol = policy.Loaded(policy.Empty(filepath.Join(filepath.Dir(path), "readproof.toml")))
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenSource == nil {
		opts.OpenSource = adapters.Open
	}
	return &Store{git: g, policy: pol, opts: opts, sources: map[string]adapters.Source{}}, nil
}

// damagedStore is the error for path, a directory git does not take for a
// repository, when it is a readproof store that lost a part git needs
// (HEAD, refs/, objects/): its config carries the store's marker. Else nil.
func damagedStore(path string) error {
	cfg, err := os.ReadFile(filepath.Join(path, "config"))
	if err != nil || !bytes.Contains(cfg, []byte("[readproof]")) {
		return nil
	}
	var what []string
	headOnly := true
	if head, err := os.ReadFile(filepath.Join(path, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		what = append(what, "HEAD is missing")
	} else if err == nil && !bytes.HasPrefix(head, []byte("ref: refs/")) && !identity.IsObjectID(string(bytes.TrimSpace(head))) {
		what = append(what, fmt.Sprintf("HEAD names no ref or commit (%q)", text.Shorten(string(bytes.TrimSpace(head)), 40)))
	}
	for _, dir := range []string{"refs", "objects"} {
		if fi, err := os.Stat(filepath.Join(path, dir)); err != nil || !fi.IsDir() {
			what = append(what, dir+"/ is missing")
			headOnly = false
		}
	}
	if len(what) == 0 {
		return nil
	}
	err = fmt.Errorf("open store %s: a damaged readproof store: %s", path, strings.Join(what, ", "))
	if headOnly {
		return hint.With(err, "write HEAD again as git does: printf 'ref: refs/heads/main\\n' > "+text.ShellArg(filepath.Join(path, "HEAD"))+"; then `readproof verify`")
	}
	return hint.With(err, "restore the store from a backup, or clone it again from a remote (readproof clone URL DIR); `git fsck` on a copy lists what else is damaged")
}

// NotOursHint is the hint for a store's place that holds something else
// (another tool's git repository, other files), which init refuses too.
const NotOursHint = "`readproof init` will not take it either: give the store a new or empty directory (`readproof --store DIR init`), or point --store / READPROOF_STORE at a readproof store"

// unreadable is the error of a store at path that this user may not read.
func unreadable(path string, err error) error {
	return hint.With(fmt.Errorf("open store %s: %w", path, err),
		"this user has no permission to read the store: check its owner and mode (ls -ld "+text.ShellArg(path)+"), or run readproof as its owner (a store is private to its owner unless it was created with --shared=group)")
}

// SetCaller sets Options.Caller on a handle opened for one caller's request;
// call it before the first write.
func (s *Store) SetCaller(name string) { s.opts.Caller = name }

// SetSourceWarn makes f, instead of Options.Git.Warn, hear the warnings
// the sources give (an ssh source's ~/.ssh/config line readproof does not
// apply), each once, on a handle opened for one caller's request: the MCP
// server puts them in the tool's answer. Call it before the first read.
func (s *Store) SetSourceWarn(f func(error)) {
	s.warnMu.Lock()
	s.sourceWarn = f
	s.warnMu.Unlock()
}

// Caller is the name set by SetCaller or Options.Caller.
func (s *Store) Caller() string { return s.opts.Caller }

// Close releases the repository.
func (s *Store) Close() error { return s.git.Close() }

// Git exposes the underlying repository, writes included, to the one
// package that moves refs outside the store's own operations: internal/share
// (fetch, push, merges of the journal and chains). Other packages use
// Objects (read-only) or Receipts.
func (s *Store) Git() gitstore.Store { return s.git }

// Objects is the repository read-only: objects and refs, for checks and
// views (storecheck).
func (s *Store) Objects() gitstore.Reader { return s.git }

// Receipts is the store's receipt ledger (refs/heads/readproof/receipts/).
// A receipt it appends for a run is bound to the run that id names here
// (receipts.Binding).
func (s *Store) Receipts() *receipts.Ledger {
	l := receipts.NewLedger(s.git)
	l.Bind = s.receiptBinding
	return l
}

// Policy returns the policy file in force, reading it now if the store was
// opened with OpenLazy and nothing has needed it yet; the error is the
// loader's.
func (s *Store) Policy() (*policy.File, error) {
	f, err := s.policy.Get()
	if err != nil {
		return nil, err
	}
	if f == nil {
		f = policy.Empty(filepath.Join(filepath.Dir(s.Path()), "readproof.toml"))
	}
	return f, nil
}

// Path is the store directory.
func (s *Store) Path() string { return s.git.Path() }

func (s *Store) now() time.Time { return s.opts.Now().UTC() }

func runRef(id string) string                { return RunsPrefix + id }
func openRef(id string) string               { return OpenPrefix + id }
func resourceRef(u identity.URI) string      { return ResourcesPrefix + u.Key() }
func tagRef(u identity.URI, t string) string { return TagsPrefix + u.Key() + "/" + t }

func contentHash(b []byte) string {
	sum := sha256.Sum256(b)
	return contentHashOf(sum[:])
}

// contentHashOf is the content hash readproof records for a SHA-256 sum.
func contentHashOf(sum []byte) string { return "sha256:" + hex.EncodeToString(sum) }

// ref reads a ref, mapping "not found" to ("", nil).
func (s *Store) ref(name string) (gitstore.OID, error) {
	id, err := s.git.Ref(name)
	if errors.Is(err, gitstore.ErrNotFound) {
		return "", nil
	}
	return id, err
}

// signature is the identity on every commit readproof writes.
func (s *Store) signature(t time.Time) gitstore.Signature {
	return gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: t}
}

// retry runs fn until it does not report a ref conflict, backing off with
// jitter. fn rebuilds its objects on the current tips each time.
func retry(what string, fn func() error) error {
	delay := 200 * time.Microsecond
	for attempt := 0; ; attempt++ {
		err := fn()
		if err == nil || !errors.Is(err, gitstore.ErrConflict) {
			return err
		}
		if attempt >= 400 {
			return hint.With(fmt.Errorf("%s: %w: gave up after %d conflicting writers", what, ErrBusy, attempt), "try again; many processes are writing the same refs")
		}
		time.Sleep(delay/2 + rand.N(delay))
		if delay < 20*time.Millisecond {
			delay *= 2
		}
	}
}

// tree helpers --------------------------------------------------------------

// file returns the blob at path inside tree root, or gitstore.ErrNotFound.
func (s *Store) file(root gitstore.OID, path string) (gitstore.OID, error) {
	return gitstore.FileAt(s.git, root, path)
}

// listFiles adds every blob under tree root to files, keyed by its path
// (prefixed with prefix).
func (s *Store) listFiles(root gitstore.OID, prefix string, files map[string]gitstore.OID) error {
	entries, err := s.git.Tree(root)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if e.Mode == gitstore.ModeDir {
			if err := s.listFiles(e.OID, prefix+e.Name+"/", files); err != nil {
				return err
			}
			continue
		}
		files[prefix+e.Name] = e.OID
	}
	return nil
}

// readFile returns the bytes of path inside the tree of commit c.
func (s *Store) readFile(c gitstore.Commit, path string) ([]byte, error) {
	id, err := s.file(c.Tree, path)
	if err != nil {
		return nil, err
	}
	return s.git.BlobAtMost(id, MaxBytesOf(path))
}

// putTree writes nested trees for a set of slash-separated paths.
func (s *Store) putTree(files map[string]gitstore.OID) (gitstore.OID, error) {
	list := make([]treeFile, 0, len(files))
	for p, id := range files {
		list = append(list, treeFile{p, id})
	}
	return s.putTreeFiles(list)
}

// treeFile is one file of putTreeFiles: its slash-separated path and blob.
type treeFile struct {
	path string
	id   gitstore.OID
}

// putTreeFiles is putTree of a list of files with distinct paths, which it
// sorts: the files of each directory are then a run of the list, and the
// trees are written from it without the maps of each level (a
// 10,000-document manifest's tree built three of 10,000 entries).
func (s *Store) putTreeFiles(files []treeFile) (gitstore.OID, error) {
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return s.putSortedTree(files, 0)
}

// putSortedTree writes the tree of files (sorted by path), whose paths all
// start with the same skip bytes, the directory's own path and its slash.
// It checks and writes as putTree did with its maps: a name that is both a
// file and a directory here is an error before any subdirectory is
// written, and subdirectories are written in name order.
func (s *Store) putSortedTree(files []treeFile, skip int) (gitstore.OID, error) {
	type group struct {
		name string
		i, k int
	}
	var entries []gitstore.TreeEntry
	var dirs []group
	for i := 0; i < len(files); {
		rest := files[i].path[skip:]
		j := strings.IndexByte(rest, '/')
		if j < 0 {
			entries = append(entries, gitstore.TreeEntry{Name: rest, Mode: gitstore.ModeFile, OID: files[i].id})
			i++
			continue
		}
		prefix := rest[:j+1]
		k := i + 1
		for k < len(files) && strings.HasPrefix(files[k].path[skip:], prefix) {
			k++
		}
		dirs = append(dirs, group{rest[:j], i, k})
		i = k
	}
	sort.Slice(dirs, func(a, b int) bool { return dirs[a].name < dirs[b].name })
	for _, e := range entries {
		if k := sort.Search(len(dirs), func(x int) bool { return dirs[x].name >= e.Name }); k < len(dirs) && dirs[k].name == e.Name {
			return "", fmt.Errorf("tree path %q is both a file and a directory", e.Name)
		}
	}
	for _, d := range dirs {
		id, err := s.putSortedTree(files[d.i:d.k], skip+len(d.name)+1)
		if err != nil {
			return "", err
		}
		entries = append(entries, gitstore.TreeEntry{Name: d.name, Mode: gitstore.ModeDir, OID: id})
	}
	return s.git.PutTree(entries)
}
