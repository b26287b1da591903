package gitstore

import (
	"bytes"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/readproof/readproof/gitstore/gitobj"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Options tune how a Store waits for ref locks. The zero value gives the
// defaults.
type Options struct {
	// LockTimeout is how long Update waits for a ref lock that someone else
	// holds before it fails with ErrLocked. Zero means DefaultLockTimeout.
	LockTimeout time.Duration
	// StaleLockAge is the age (by modification time) after which a lock file
	// is taken to be left behind by a crashed process and is removed. Zero
	// means DefaultStaleLockAge.
	StaleLockAge time.Duration
}

const (
	// DefaultLockTimeout is the LockTimeout used when Options leaves it zero.
	DefaultLockTimeout = 15 * time.Second
	// DefaultStaleLockAge is the StaleLockAge used when Options leaves it zero.
	DefaultStaleLockAge = 10 * time.Second
)

func (o Options) withDefaults() Options {
	if o.LockTimeout <= 0 {
		o.LockTimeout = DefaultLockTimeout
	}
	if o.StaleLockAge <= 0 {
		o.StaleLockAge = DefaultStaleLockAge
	}
	return o
}

// ErrExists is returned (wrapped) by Init when the path already holds a
// readproof store.
var ErrExists = errors.New("store already exists")

// errClosed is returned by every method called after Close.
var errClosed = errors.New("store is closed")

// repo is the Store implementation: go-git's filesystem storage for objects,
// our own code for refs.
type repo struct {
	path string // the git directory, absolute
	opts Options

	// mu guards st (go-git storages are not goroutine-safe), pending and
	// closed.
	mu      sync.Mutex
	st      *filesystem.Storage
	pending []string // object files (relative, slash-separated) not yet synced

	buf      map[plumbing.Hash]bufObj // objects not yet written (pack.go)
	bufOrder []plumbing.Hash
	bufBytes int
	closed   bool

	packsSeen      string    // the .idx files go-git's index was loaded from
	packsCheckedAt time.Time // when packsSeen was last compared with the disk

	// pmu guards packed, the parsed packed-refs file.
	pmu    sync.Mutex
	packed *packedRefs
}

// Init creates a store at path with default Options. See InitWithOptions.
func Init(path string) (Store, error) { return InitWithOptions(path, Options{}) }

// InitWithOptions creates a bare repository at path, laid out like
// `git init --bare` with HEAD on refs/heads/main, plus the marker
// `[readproof] store = 1` in its config, and opens it. The repository is built
// in a temporary directory beside path and renamed into place, so a crash
// leaves either nothing or a complete store. path may be missing or an empty
// directory; an existing store gives an error wrapping ErrExists.
func InitWithOptions(path string, opts Options) (Store, error) {
	if path == "" {
		return nil, errors.New("init store: empty path: name the directory to create")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err == nil:
		if !fi.IsDir() {
			return nil, fmt.Errorf("init store %s: path exists and is not a directory: choose another path", path)
		}
		if IsStore(abs) {
			return nil, fmt.Errorf("init store %s: %w: open it instead", path, ErrExists)
		}
		if empty, err := isEmptyDir(abs); err != nil {
			return nil, fmt.Errorf("init store %s: %w", path, err)
		} else if !empty {
			return nil, fmt.Errorf("init store %s: directory is not empty and is not a readproof store: choose an empty or new directory", path)
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}

	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o777); err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".init-")
	if err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := buildRepo(tmp); err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		if IsStore(abs) {
			return nil, fmt.Errorf("init store %s: %w: open it instead", path, ErrExists)
		}
		// Renaming over an empty directory is not allowed everywhere.
		if empty, _ := isEmptyDir(abs); !empty || os.Remove(abs) != nil || os.Rename(tmp, abs) != nil {
			return nil, fmt.Errorf("init store %s: %w", path, err)
		}
	}
	done = true
	if err := syncDir(parent); err != nil {
		return nil, fmt.Errorf("init store %s: %w", path, err)
	}
	return OpenWithOptions(abs, opts)
}

const initConfig = "[core]\n" +
	"\trepositoryformatversion = 0\n" +
	"\tfilemode = true\n" +
	"\tbare = true\n" +
	"[readproof]\n" +
	"\tstore = 1\n"

// buildRepo lays out a bare repository in dir and makes it durable.
func buildRepo(dir string) error {
	if err := os.Chmod(dir, 0o755); err != nil {
		return err
	}
	dirs := []string{"objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags"}
	for _, d := range dirs {
		if err := os.Mkdir(filepath.Join(dir, d), 0o777); err != nil {
			return err
		}
	}
	files := []struct{ name, content string }{
		{"HEAD", "ref: refs/heads/main\n"},
		{"config", initConfig},
		{"description", "readproof evidence store\n"},
		// Keeps the store out of an enclosing work tree (docs/store-format.md).
		{".gitignore", "*\n"},
	}
	for _, f := range files {
		if err := writeFileSync(filepath.Join(dir, f.name), []byte(f.content)); err != nil {
			return err
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		if err := syncDir(filepath.Join(dir, dirs[i])); err != nil {
			return err
		}
	}
	return syncDir(dir)
}

func writeFileSync(name string, data []byte) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func fsyncPath(name string) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
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
	if err := checkFormat(gitdir); err != nil {
		return nil, fmt.Errorf("open store %s: %w", path, err)
	}
	// go-git writes loose objects through a temporary file in objects/pack.
	_ = os.MkdirAll(filepath.Join(gitdir, "objects", "pack"), 0o777)
	st := filesystem.NewStorageWithOptions(osfs.New(gitdir), cache.NewObjectLRUDefault(), filesystem.Options{KeepDescriptors: true})
	return &repo{path: gitdir, opts: opts.withDefaults(), st: st}, nil
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
	return strings.TrimSpace(cfg.Section("readproof").Options.Get("store")) == "1"
}

// findGitDir returns the absolute git directory for path: path itself when it
// is a repository directory, else path/.git (a directory, or a file with a
// "gitdir:" line).
func findGitDir(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("open store %s: %w: the directory does not exist; create it with init", path, ErrNotStore)
		}
		return "", fmt.Errorf("open store %s: %w", path, err)
	}
	if gitobj.IsGitDir(abs) {
		return abs, nil
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
	f, err := os.Open(filepath.Join(gitdir, "config"))
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
// write correctly.
func checkFormat(gitdir string) error {
	cfg, err := readConfig(gitdir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil // git accepts a repository without config
	}
	if err != nil {
		return fmt.Errorf("read config: %w: repair or remove the config file", err)
	}
	version := strings.TrimSpace(cfg.Section("core").Options.Get("repositoryformatversion"))
	switch version {
	case "", "0":
		return nil
	case "1":
	default:
		return fmt.Errorf("repository format version %s is not supported: use a repository made by git init", version)
	}
	ext := cfg.Section("extensions").Options
	if f := strings.ToLower(strings.TrimSpace(ext.Get("objectformat"))); f != "" && f != "sha1" {
		return fmt.Errorf("object format %s is not supported: readproof stores use sha1 repositories", f)
	}
	if r := strings.ToLower(strings.TrimSpace(ext.Get("refstorage"))); r != "" && r != "files" {
		return fmt.Errorf("ref storage %s is not supported: readproof stores use the files ref backend", r)
	}
	return nil
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

// refreshPacks makes go-git reload its pack indexes when the set of packs
// changed (git gc or repack ran). Called with s.mu held.
func (s *repo) refreshPacks() {
	if time.Since(s.packsCheckedAt) < packCheckEvery {
		return
	}
	s.packsCheckedAt = time.Now()
	entries, err := os.ReadDir(filepath.Join(s.path, "objects", "pack"))
	if err != nil {
		return
	}
	var b strings.Builder
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".idx") {
			b.WriteString(e.Name())
		}
	}
	if b.String() != s.packsSeen {
		s.packsSeen = b.String()
		s.st.Reindex()
	}
}

// ---- object ids ----

// isHexOID is gitobj.IsObjectID.
func isHexOID(s string) bool { return gitobj.IsObjectID(s) }

const zeroOID = "0000000000000000000000000000000000000000"

// parseOID checks that id is 40 lower-case hex digits and not the null id.
func parseOID(id OID) (plumbing.Hash, error) {
	if !isHexOID(string(id)) || id == zeroOID {
		return plumbing.ZeroHash, fmt.Errorf("object id %q is not 40 lower-case hex digits: pass an id returned by the store", string(id))
	}
	return plumbing.NewHash(string(id)), nil
}

func looseRel(h plumbing.Hash) string {
	hex := h.String()
	return "objects/" + hex[:2] + "/" + hex[2:]
}

// ---- writing objects ----

// PutBlob stores data as a blob.
func (s *repo) PutBlob(data []byte) (OID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.BlobObject, data)
}

// PutTree stores a tree after sorting and checking its entries.
func (s *repo) PutTree(entries []TreeEntry) (OID, error) {
	data, err := encodeTree(entries)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.TreeObject, data)
}

// PutCommit stores a commit, with its signature in the gpgsig header.
func (s *repo) PutCommit(c Commit) (OID, error) {
	data, err := encodeCommit(c)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.CommitObject, data)
}

// putObject writes data as an object of type t unless it is already stored
// (loose or packed). Called with s.mu held.
func (s *repo) putObject(t plumbing.ObjectType, data []byte) (OID, error) {
	if s.closed {
		return "", errClosed
	}
	h := plumbing.ComputeHash(t, data)
	if _, ok := s.buf[h]; ok {
		return OID(h.String()), nil
	}
	rel := looseRel(h)
	if full := filepath.Join(s.path, filepath.FromSlash(rel)); fileExists(full) && freshenLoose(full) {
		// Another process may have written it without syncing yet: make it
		// part of our next Sync. Re-stamped so a concurrent gc keeps it (gc.go).
		s.pending = append(s.pending, rel)
		return OID(h.String()), nil
	}
	// A stale pack index would only cost a duplicate loose object here, so
	// the pack list is re-read at most every packCheckEvery.
	s.refreshPacks()
	if err := s.st.HasEncodedObject(h); err == nil && s.freshenPacked() {
		return OID(h.String()), nil
	}
	if err := s.buffer(h, t, data); err != nil {
		return "", fmt.Errorf("write %s object: %w", t, err)
	}
	return OID(h.String()), nil
}

// writeLooseOnce writes one loose object (writeLoose, in gc.go, retries
// it). Called with s.mu held.
func (s *repo) writeLooseOnce(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	rel := looseRel(h)
	w, header, err := s.st.LazyWriter()
	if err != nil {
		return fmt.Errorf("write %s object: %w", t, err)
	}
	if err := header(t, int64(len(data))); err != nil {
		w.Close()
		return fmt.Errorf("write %s object: %w", t, err)
	}
	if _, err := w.Write(data); err != nil {
		w.Close()
		return fmt.Errorf("write %s object: %w", t, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s object %s: %w", t, h, err)
	}
	if hw, ok := w.(interface{ Hash() plumbing.Hash }); ok && hw.Hash() != h {
		os.Remove(filepath.Join(s.path, filepath.FromSlash(looseRel(hw.Hash()))))
		return fmt.Errorf("write %s object %s: wrote %s instead: %w", t, h, hw.Hash(), ErrCorrupt)
	}
	s.pending = append(s.pending, rel)
	return nil
}

// treeSortName is the key git sorts tree entries by: directories compare as
// if their name ended in "/".
func treeSortName(name string, mode Mode) string {
	if mode == ModeDir {
		return name + "/"
	}
	return name
}

// encodeTree checks, sorts and encodes entries as a tree object's content.
func encodeTree(entries []TreeEntry) ([]byte, error) {
	es := make([]object.TreeEntry, len(entries))
	seen := make(map[string]struct{}, len(entries))
	for i, e := range entries {
		if err := CheckTreeName(e.Name); err != nil {
			return nil, fmt.Errorf("put tree: %w", err)
		}
		if _, dup := seen[e.Name]; dup {
			return nil, fmt.Errorf("put tree: entry %q appears twice: tree entry names must be unique", e.Name)
		}
		seen[e.Name] = struct{}{}
		var fm filemode.FileMode
		switch e.Mode {
		case ModeFile:
			fm = filemode.Regular
		case ModeDir:
			fm = filemode.Dir
		default:
			return nil, fmt.Errorf("put tree: entry %q has mode %o: use ModeFile or ModeDir", e.Name, uint32(e.Mode))
		}
		h, err := parseOID(e.OID)
		if err != nil {
			return nil, fmt.Errorf("put tree: entry %q: %w", e.Name, err)
		}
		es[i] = object.TreeEntry{Name: e.Name, Mode: fm, Hash: h}
	}
	sort.Slice(es, func(i, j int) bool {
		return treeSortName(es[i].Name, Mode(es[i].Mode)) < treeSortName(es[j].Name, Mode(es[j].Mode))
	})
	mo := &plumbing.MemoryObject{}
	if err := (&object.Tree{Entries: es}).Encode(mo); err != nil {
		return nil, fmt.Errorf("put tree: %w", err)
	}
	return objectBytes(mo)
}

func objectBytes(mo *plumbing.MemoryObject) ([]byte, error) {
	r, err := mo.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	data := make([]byte, 0, mo.Size())
	buf := bytes.NewBuffer(data)
	_, err = buf.ReadFrom(r)
	return buf.Bytes(), err
}

// CheckTreeName reports whether name may be written as a tree entry: not
// empty, ".", "..", ".git" or ".gitmodules" (ignoring case and the spellings
// NTFS and HFS+ treat as equal), and without "/" or NUL. Such names keep
// `git fsck --strict` clean and cannot escape a checkout.
func CheckTreeName(name string) error {
	switch {
	case name == "":
		return errors.New("tree entry name is empty: name every entry")
	case name == "." || name == "..":
		return fmt.Errorf("tree entry name %q is not allowed: use a real file name", name)
	case strings.ContainsRune(name, '/'):
		return fmt.Errorf("tree entry name %q contains '/': nest a tree instead", name)
	case strings.IndexByte(name, 0) >= 0:
		return fmt.Errorf("tree entry name %q contains NUL: remove it", name)
	case isDotGitLike(name):
		return fmt.Errorf("tree entry name %q is reserved by git: rename the entry", name)
	}
	return nil
}

// isDotGitLike reports whether some component of name (split at '\', which
// Windows treats as a separator) means .git or .gitmodules to git, NTFS or
// HFS+.
func isDotGitLike(name string) bool {
	for _, part := range strings.Split(name, `\`) {
		p := stripHFSIgnorable(part)
		p = strings.TrimRight(p, ". ") // NTFS drops trailing dots and spaces
		p = strings.ToLower(p)
		switch p {
		case ".git", ".gitmodules", "git~1", "gitmod~1":
			return true
		}
		// Other NTFS 8.3 short names of .gitmodules look like gi7eba~N.
		if strings.HasPrefix(p, "gi") && len(p) == 8 && p[6] == '~' && p[7] >= '1' && p[7] <= '9' {
			return true
		}
	}
	return false
}

// stripHFSIgnorable drops the code points HFS+ ignores when comparing names.
func stripHFSIgnorable(s string) string {
	if utf8.ValidString(s) && !strings.ContainsFunc(s, hfsIgnorable) {
		return s
	}
	return strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, s)
}

func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}

// checkIdent refuses identities git fsck would flag or go-git would alter.
func checkIdent(role string, sig Signature) error {
	for _, f := range []struct{ what, v string }{{"name", sig.Name}, {"email", sig.Email}} {
		if strings.ContainsAny(f.v, "<>\n\x00") {
			return fmt.Errorf("%s %s %q contains '<', '>', a newline or NUL: remove them", role, f.what, f.v)
		}
		if strings.TrimSpace(f.v) != f.v {
			return fmt.Errorf("%s %s %q has leading or trailing white space, which git drops: trim it", role, f.what, f.v)
		}
	}
	if sig.When.Unix() < 0 {
		return fmt.Errorf("%s time %s is before 1970 or unset: set Signature.When", role, sig.When.Format(time.RFC3339))
	}
	return nil
}

// encodeCommit checks c and returns the content of its commit object.
func encodeCommit(c Commit) ([]byte, error) {
	tree, err := parseOID(c.Tree)
	if err != nil {
		return nil, fmt.Errorf("put commit: tree: %w", err)
	}
	parents := make([]plumbing.Hash, len(c.Parents))
	for i, p := range c.Parents {
		if parents[i], err = parseOID(p); err != nil {
			return nil, fmt.Errorf("put commit: parent %d: %w", i+1, err)
		}
	}
	if err := checkIdent("author", c.Author); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	if err := checkIdent("committer", c.Committer); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	if strings.IndexByte(c.Message, 0) >= 0 {
		return nil, errors.New("put commit: message contains NUL: remove it")
	}
	if c.Signature != "" && (strings.IndexByte(c.Signature, 0) >= 0 || strings.Contains(c.Signature, "\r") || !strings.HasSuffix(c.Signature, "\n")) {
		return nil, errors.New("put commit: signature contains NUL or CR, or does not end with a newline: pass the armored signature exactly as the signer produced it")
	}
	gc := &object.Commit{
		TreeHash:     tree,
		ParentHashes: parents,
		Author:       object.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When},
		Committer:    object.Signature{Name: c.Committer.Name, Email: c.Committer.Email, When: c.Committer.When},
		Message:      c.Message,
		PGPSignature: c.Signature,
	}
	mo := &plumbing.MemoryObject{}
	if err := gc.Encode(mo); err != nil {
		return nil, fmt.Errorf("put commit: %w", err)
	}
	return objectBytes(mo)
}

// CommitPayload returns the content of c's commit object without any
// signature header: the bytes a commit signature covers and what
// `git verify-commit` checks. c.Signature is ignored.
func CommitPayload(c Commit) ([]byte, error) {
	c.Signature = ""
	return encodeCommit(c)
}

// ---- reading objects ----

// readObject returns an object whose content matches its id. Called with
// s.mu held.
func (s *repo) readObject(id OID) (plumbing.EncodedObject, []byte, error) {
	if s.closed {
		return nil, nil, errClosed
	}
	h, err := parseOID(id)
	if err != nil {
		return nil, nil, err
	}
	if o, data, ok := s.buffered(h); ok {
		return o, data, nil
	}
	var o plumbing.EncodedObject
	var data []byte
	read := func() error {
		var err error
		if o, err = s.st.EncodedObject(plumbing.AnyObject, h); err != nil {
			return err
		}
		r, err := o.Reader()
		if err != nil {
			return err
		}
		defer r.Close()
		// exactly the declared size, then nothing more
		data = make([]byte, o.Size())
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		var one [1]byte
		if n, _ := r.Read(one[:]); n != 0 {
			return fmt.Errorf("object longer than its declared %d bytes", o.Size())
		}
		return nil
	}
	if err := read(); err != nil {
		// git gc may have packed the object, or replaced the pack we knew
		// (the index may still name a pack that was just removed).
		err = s.afterMiss(read)
		switch {
		case err == nil:
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return nil, nil, fmt.Errorf("object %s: %w", id, ErrNotFound)
		case errors.Is(err, fs.ErrPermission):
			return nil, nil, fmt.Errorf("read object %s: %w", id, err)
		default:
			return nil, nil, fmt.Errorf("read object %s: %w: %w: run git fsck on the store", id, ErrCorrupt, err)
		}
	}
	if objectHash(o.Type(), data) != h {
		return nil, nil, fmt.Errorf("read object %s: %w: content does not match its id: the store was modified outside git; run git fsck", id, ErrCorrupt)
	}
	return o, data, nil
}

// RawObject returns an object's type and content.
func (s *repo) RawObject(id OID) (string, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return "", nil, err
	}
	return o.Type().String(), data, nil
}

// Blob returns a blob's bytes.
func (s *repo) Blob(id OID) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return nil, err
	}
	if o.Type() != plumbing.BlobObject {
		return nil, fmt.Errorf("blob %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	return data, nil
}

// Tree returns a tree's entries in git order.
func (s *repo) Tree(id OID) ([]TreeEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, _, err := s.readObject(id)
	if err != nil {
		return nil, err
	}
	if o.Type() != plumbing.TreeObject {
		return nil, fmt.Errorf("tree %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	var t object.Tree
	if err := t.Decode(o); err != nil {
		return nil, fmt.Errorf("tree %s: %w: %w", id, ErrCorrupt, err)
	}
	out := make([]TreeEntry, len(t.Entries))
	for i, e := range t.Entries {
		out[i] = TreeEntry{Name: e.Name, Mode: Mode(e.Mode), OID: OID(e.Hash.String())}
	}
	return out, nil
}

// Commit returns a decoded commit, signature included.
func (s *repo) Commit(id OID) (Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, _, err := s.readObject(id)
	if err != nil {
		return Commit{}, err
	}
	if o.Type() != plumbing.CommitObject {
		return Commit{}, fmt.Errorf("commit %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	var gc object.Commit
	if err := gc.Decode(o); err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w: %w", id, ErrCorrupt, err)
	}
	c := Commit{
		Tree:      OID(gc.TreeHash.String()),
		Author:    Signature{Name: gc.Author.Name, Email: gc.Author.Email, When: gc.Author.When},
		Committer: Signature{Name: gc.Committer.Name, Email: gc.Committer.Email, When: gc.Committer.When},
		Message:   gc.Message,
		Signature: gc.PGPSignature,
	}
	for _, p := range gc.ParentHashes {
		c.Parents = append(c.Parents, OID(p.String()))
	}
	return c, nil
}

// Has reports whether an object exists, loose or packed.
func (s *repo) Has(id OID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has(id)
}

// has is Has with s.mu held.
func (s *repo) has(id OID) (bool, error) {
	if s.closed {
		return false, errClosed
	}
	h, err := parseOID(id)
	if err != nil {
		return false, err
	}
	if _, ok := s.buf[h]; ok {
		return true, nil
	}
	if _, err := os.Lstat(filepath.Join(s.path, filepath.FromSlash(looseRel(h)))); err == nil {
		return true, nil
	}
	err = s.st.HasEncodedObject(h)
	if err != nil {
		err = s.afterMiss(func() error { return s.st.HasEncodedObject(h) })
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("look up object %s: %w", id, err)
	}
}

// Sync makes every object written through this Store durable.
func (s *repo) Sync() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	if err := s.flush(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("write objects in %s: %w", s.path, err)
	}
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if len(pending) == 0 {
		return nil
	}
	if err := s.syncObjects(pending); err != nil {
		s.mu.Lock()
		s.pending = append(s.pending, pending...)
		s.mu.Unlock()
		return fmt.Errorf("sync objects in %s: %w", s.path, err)
	}
	return nil
}

// objectHash is the git object id of data, computed with the standard
// library's SHA-1 (hardware accelerated). It checks what was read against
// the id it was asked for; go-git's collision-detecting SHA-1 still names
// every object written.
func objectHash(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	h.Write(t.Bytes())
	h.Write([]byte(" " + strconv.Itoa(len(data)) + "\x00"))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}
