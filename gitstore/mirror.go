package gitstore

// The mirror cache: one bare repository per remote URL under a cache
// directory, fetched incrementally, read for single files at a ref. It is a
// cache, not evidence: deleting it loses nothing, and the next Fetch makes it
// again.

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/config"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/capability"
	"github.com/go-git/go-git/v5/plumbing/protocol/packp/sideband"
	"github.com/go-git/go-git/v5/plumbing/storer"
	"github.com/go-git/go-git/v5/plumbing/transport"
	githttp "github.com/go-git/go-git/v5/plumbing/transport/http"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/readproof/readproof/internal/progress"
)

// Errors of the mirror cache.
var (
	// ErrUnknownRef: the ref names no branch, tag or commit of the mirror.
	ErrUnknownRef = errors.New("ref not found in the repository")
	// ErrPathNotFound: the commit has no entry at the path.
	ErrPathNotFound = errors.New("path not found in the commit")
	// ErrNotFile: the path names a directory, a symbolic link or a submodule.
	ErrNotFile = errors.New("path is not a regular file")
	// ErrFileTooLarge: the blob is larger than the caller's limit.
	ErrFileTooLarge = errors.New("file exceeds the size limit")
	// ErrRepoNotFound: the remote has no repository at the URL.
	ErrRepoNotFound = errors.New("no repository at the URL")
	// ErrAuth: the remote wants credentials readproof does not have.
	ErrAuth = errors.New("the remote requires authentication")
)

// MirrorOptions adjust how a mirror reaches its remote.
type MirrorOptions struct {
	// HTTPClient carries http and https fetches (redirect and address
	// checks included); nil means go-git's default client.
	HTTPClient *http.Client
	// MaxObjectBytes refuses a fetch whose pack holds a larger object
	// (ErrObjectTooLarge), before it is inflated, or whose remote lists
	// more bytes of refs (ErrAdvertTooLarge; over http and https only
	// through HTTPClient); 0 means DefaultMirrorMaxObject. Every object of a fetched pack is held whole
	// in memory once while the pack is indexed, so this bounds what one
	// object costs; MaxPackBytes and MaxPackObjects bound the whole pack.
	MaxObjectBytes int64
	// MaxPackBytes refuses a fetch whose pack is larger (ErrRepoTooLarge)
	// once one byte more has arrived; 0 means 10 times the object bound.
	// The pack is spooled to disk whole before it is indexed. It also
	// bounds what the pack's objects come to once inflated, a delta counted
	// with its base (ErrRepoTooLarge, from each entry's header): at the
	// larger of it and the object bound, or madePerPackByte times the
	// bytes of pack read.
	MaxPackBytes int64
	// MaxPackObjects refuses a fetch whose pack holds more objects
	// (ErrRepoTooLarge), from the pack's header, before an object is
	// read; 0 means one per 2 KiB of MaxPackBytes. go-git keeps about 470
	// bytes per object while it indexes the pack.
	MaxPackObjects int64
	// MaxChainBytes refuses a fetch whose pack holds a delta whose chain
	// (the delta, its base, its base's base ...) makes more bytes
	// (ErrDeltaChainTooLarge), from each entry's header before it is
	// inflated: go-git holds every level of a chain at once while it
	// makes a delta. 0 means the larger of DefaultMirrorMaxChain and twice
	// the object bound.
	MaxChainBytes int64
	// Dial connects git:// and ssh fetches (the caller can check the
	// address it connects to); nil means a plain net.Dialer. The address
	// is host:port as the URL (or, for ssh, ~/.ssh/config) names it.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// SSHConfig is the ssh configuration an ssh fetch follows (its
	// Hostname, Port, User and IdentityFile for the host), as the caller
	// read it to check the address; nil means ReadSSHConfig at the fetch.
	SSHConfig *SSHConfig
	// LockWait, when set, hears once of a wait for the mirror's lock,
	// which another process holds while it fetches (or reads), once the
	// wait has lasted LockWaitNotice (zero: DefaultLockWaitNotice). Nil:
	// the wait is silent.
	LockWait       func(LockWaitInfo)
	LockWaitNotice time.Duration
}

// Mirror is a bare copy of one remote repository in a cache directory.
// Methods are safe for concurrent use, within a process and across
// processes: a lock file beside the mirror serialises fetches and lets
// reads share.
type Mirror struct {
	url  string
	dir  string
	lock string
	opts MirrorOptions
	mu   sync.Mutex
	// advert bounds the ref advertisement of the fetch under way (set
	// with mu held).
	advert *advertGuard
}

// OpenMirror returns the mirror of url under cacheDir, in a directory named
// by a hash of the URL. Nothing is created or fetched until Fetch.
func OpenMirror(cacheDir, url string, opts MirrorOptions) (*Mirror, error) {
	if cacheDir == "" {
		return nil, errors.New("git mirror: no cache directory")
	}
	if url == "" {
		return nil, errors.New("git mirror: no url")
	}
	if _, bracketed, err := parseEndpoint(url); bracketed && err != nil {
		// the part of the address ssh cannot use
		return nil, fmt.Errorf("git mirror: %w", err)
	} else if err != nil {
		return nil, fmt.Errorf("git mirror: %q is not a git URL", redactUserinfo(url))
	}
	abs, err := filepath.Abs(cacheDir)
	if err != nil {
		return nil, fmt.Errorf("git mirror: cache directory %s: %w", cacheDir, err)
	}
	sum := sha256.Sum256([]byte(url))
	name := hex.EncodeToString(sum[:16])
	return &Mirror{
		url:  url,
		dir:  filepath.Join(abs, name+".git"),
		lock: filepath.Join(abs, name+".lock"),
		opts: opts,
	}, nil
}

// waiting is what lockMirror calls after each attempt that found the lock
// held: MirrorOptions.LockWait hears of a wait that lasts the notice.
func (m *Mirror) waiting() func() {
	var wait progress.Waiter
	started := false
	return func() {
		if !started {
			wait, started = progress.NewWaiter(m.opts.LockWait, m.opts.LockWaitNotice), true
		}
		wait.Check(time.Now(), func() (LockWaitInfo, bool) {
			return LockWaitInfo{Path: m.lock, Lock: "the git mirror of " + redactUserinfo(m.url), Holder: "another readproof fetching or reading it", Find: flockFind, Left: -1}, true
		})
	}
}

// Dir is the mirror's repository directory.
func (m *Mirror) Dir() string { return m.dir }

// Fetch brings the mirror up to date with the remote: every branch and tag,
// and HEAD. Only objects the mirror lacks are transferred. Refs the remote no
// longer has are removed, and moved refs follow the remote, forced or not.
func (m *Mirror) Fetch(ctx context.Context) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	unlock, err := lockMirror(ctx, m.lock, false, m.waiting())
	if err != nil {
		return err
	}
	defer unlock()
	removeReceived(m.dir)

	st, err := m.storage(true)
	if err != nil {
		return err
	}
	defer st.Close()

	ep, err := newEndpoint(m.url)
	if err != nil {
		return fmt.Errorf("git mirror: %q is not a git URL", redactUserinfo(m.url))
	}
	bounds := mirrorPackBounds(m.opts)
	m.advert = &advertGuard{max: bounds.object}
	defer func() { m.advert = nil }()
	tr, err := m.transport(ctx, ep)
	if err != nil {
		return fmt.Errorf("git mirror: %w", err)
	}
	sess, err := tr.NewUploadPackSession(ep, nil)
	if err != nil {
		return remoteErr(err)
	}
	defer sess.Close()
	if ls, ok := sess.(*localSession); ok {
		ls.advert = m.advert
	}

	ar, err := sess.AdvertisedReferencesContext(ctx)
	if m.advert.hit.Load() {
		return m.advert.err()
	}
	if errors.Is(err, transport.ErrEmptyRemoteRepository) {
		return syncRefs(st, map[plumbing.ReferenceName]plumbing.Hash{}, nil)
	}
	if err != nil {
		return remoteErr(err)
	}
	remote := map[plumbing.ReferenceName]plumbing.Hash{}
	for name, h := range ar.References {
		n := plumbing.ReferenceName(name)
		if n.IsBranch() || n.IsTag() {
			remote[n] = h
		}
	}
	var head *plumbing.Reference
	for _, v := range ar.Capabilities.Get(capability.SymRef) {
		if src, dst, ok := strings.Cut(v, ":"); ok && src == "HEAD" {
			if _, known := remote[plumbing.ReferenceName(dst)]; known {
				head = plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.ReferenceName(dst))
			}
		}
	}
	if head == nil && ar.Head != nil {
		head = plumbing.NewHashReference(plumbing.HEAD, *ar.Head)
	}

	var wants []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	addWant := func(h plumbing.Hash) {
		if !seen[h] && st.HasEncodedObject(h) != nil {
			wants = append(wants, h)
		}
		seen[h] = true
	}
	for _, h := range remote {
		addWant(h)
	}
	if head != nil && head.Type() == plumbing.HashReference {
		addWant(head.Hash())
	}
	if len(wants) > 0 {
		haves, err := localTips(st)
		if err != nil {
			return err
		}
		req := packp.NewUploadPackRequestFromCapabilities(ar.Capabilities)
		if ar.Capabilities.Supports(capability.NoProgress) {
			_ = req.Capabilities.Set(capability.NoProgress)
		}
		req.Wants = wants
		req.Haves = haves
		resp, err := sess.UploadPack(ctx, req)
		if err != nil && !errors.Is(err, transport.ErrEmptyUploadPackRequest) {
			if cerr := ctx.Err(); cerr != nil {
				return cerr
			}
			return remoteErr(err)
		}
		if err == nil {
			var f *os.File
			f, err = receivePackBounded(m.dir, demux(req.Capabilities, resp), bounds, mirrorChainBound(m.opts, bounds))
			if ls, ok := sess.(*localSession); ok && err != nil {
				// a refused pack is not read to its end: upload-pack (or
				// the connection) is stopped, not waited for while it
				// blocks writing the rest
				ls.stop()
			}
			resp.Close()
			if err == nil {
				err = storeReceived(ctx, st, m.dir, f)
				f.Close()
				os.Remove(f.Name())
			}
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				return fmt.Errorf("git mirror: receiving objects: %w", err)
			}
		}
	}
	return syncRefs(st, remote, head)
}

// transport picks the client for the endpoint's scheme: the schemes
// go-git's transport/client registers (http, https, ssh, git, file), each
// imported alone, so that what go-git's file transport package carries
// along (its in-process server, and with it go-git's object model and
// OpenPGP code) stays out of every binary that links gitstore. http and
// https go through opts.HTTPClient when the caller gives one (its redirect
// and address checks); file (paths included) through stock git's
// upload-pack, as go-git's file transport did; git and ssh over
// connections made by opts.Dial (mirror_dial.go).
func (m *Mirror) transport(ctx context.Context, ep *transport.Endpoint) (transport.Transport, error) {
	switch ep.Protocol {
	case "http", "https":
		if m.opts.HTTPClient != nil {
			c := m.opts.HTTPClient
			if m.advert != nil {
				c = guardedClient(c, m.advert)
			}
			return githttp.NewClient(c), nil
		}
		return githttp.DefaultClient, nil
	case "ssh", "git":
		return m.dialTransport(ctx), nil
	case "file":
		return localTransport{}, nil
	}
	return nil, fmt.Errorf("unsupported scheme %q", ep.Protocol)
}

// demux returns the pack data of r, the response to an upload-pack
// request. Its progress messages (sideband channel 2), which the pack
// bounds do not see, are dropped, up to maxProgress bytes: the demuxer
// reads on through them without returning, so a remote sending nothing
// else would otherwise be stopped only by the fetch's timeout.
func demux(caps *capability.List, r io.Reader) io.Reader {
	var d *sideband.Demuxer
	switch {
	case caps.Supports(capability.Sideband64k):
		d = sideband.NewDemuxer(sideband.Sideband64k, r)
	case caps.Supports(capability.Sideband):
		d = sideband.NewDemuxer(sideband.Sideband, r)
	default:
		return r
	}
	d.Progress = &progressLimit{left: maxProgress}
	return d
}

// maxProgress bounds the progress messages of one fetch: the request asks
// for none when the remote can be asked (no-progress), and git's own,
// when it sends them, are a few KiB.
const maxProgress = 1 << 20

// progressLimit drops what is written to it, and fails once more than
// left bytes have been.
type progressLimit struct{ left int }

func (p *progressLimit) Write(b []byte) (int, error) {
	if len(b) > p.left {
		return 0, fmt.Errorf("%w: the remote sent more than %d bytes of progress messages", errPackCorrupt, maxProgress)
	}
	p.left -= len(b)
	return len(b), nil
}

// remoteErr translates go-git's transport errors into the mirror's.
func remoteErr(err error) error {
	switch {
	case errors.Is(err, transport.ErrRepositoryNotFound):
		return fmt.Errorf("%w (%v)", ErrRepoNotFound, err)
	case errors.Is(err, transport.ErrAuthenticationRequired), errors.Is(err, transport.ErrAuthorizationFailed):
		// both wrapped: an *SSHAuthError inside says what was offered
		return fmt.Errorf("%w (%w)", ErrAuth, err)
	}
	return fmt.Errorf("git mirror: %w", err)
}

// localTips lists the commits the mirror's refs point at: the "haves" that
// let the remote send only what is new.
func localTips(st *filesystem.Storage) ([]plumbing.Hash, error) {
	iter, err := st.IterReferences()
	if err != nil {
		return nil, fmt.Errorf("git mirror: reading refs: %w", err)
	}
	var out []plumbing.Hash
	seen := map[plumbing.Hash]bool{}
	err = iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && !seen[r.Hash()] && st.HasEncodedObject(r.Hash()) == nil {
			seen[r.Hash()] = true
			out = append(out, r.Hash())
		}
		return nil
	})
	return out, err
}

// syncRefs makes the mirror's branches and tags those of the remote.
func syncRefs(st *filesystem.Storage, remote map[plumbing.ReferenceName]plumbing.Hash, head *plumbing.Reference) error {
	iter, err := st.IterReferences()
	if err != nil {
		return fmt.Errorf("git mirror: reading refs: %w", err)
	}
	var stale []plumbing.ReferenceName
	_ = iter.ForEach(func(r *plumbing.Reference) error {
		n := r.Name()
		if h, ok := remote[n]; (n.IsBranch() || n.IsTag()) && (!ok || r.Type() != plumbing.HashReference || r.Hash() != h) {
			stale = append(stale, n)
		}
		return nil
	})
	for _, n := range stale {
		if err := st.RemoveReference(n); err != nil {
			return fmt.Errorf("git mirror: removing %s: %w", n, err)
		}
	}
	for n, h := range remote {
		if err := st.SetReference(plumbing.NewHashReference(n, h)); err != nil {
			return fmt.Errorf("git mirror: updating %s: %w", n, err)
		}
	}
	if head != nil {
		if err := st.SetReference(head); err != nil {
			return fmt.Errorf("git mirror: updating HEAD: %w", err)
		}
	}
	return nil
}

// storage opens the mirror's repository. With create, a missing or
// unreadable mirror is (re)made: initialised in a temporary directory and
// renamed into place, so a half-made mirror is never seen. The caller holds
// the exclusive lock when create is set.
func (m *Mirror) storage(create bool) (*filesystem.Storage, error) {
	if err := checkMirror(m.dir); err != nil {
		if !create {
			if errors.Is(err, errNoMirror) {
				return nil, fmt.Errorf("%w: the mirror has not been fetched yet", ErrUnknownRef)
			}
			return nil, fmt.Errorf("git mirror %s: %w", m.dir, err)
		}
		if err := m.recreate(); err != nil {
			return nil, err
		}
	}
	return filesystem.NewStorage(osfs.New(m.dir), cache.NewObjectLRUDefault()), nil
}

// errNoMirror: the mirror's directory, or its HEAD, is missing (go-git's
// ErrRepositoryNotExists, whose text it keeps).
var errNoMirror = errors.New("repository does not exist")

// checkMirror makes the checks go-git's PlainOpen made of a bare
// repository: the directory exists, HEAD is there, the config reads.
func checkMirror(dir string) error {
	if _, err := os.Stat(dir); err != nil {
		if os.IsNotExist(err) {
			return errNoMirror
		}
		return err
	}
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	if _, err := st.Reference(plumbing.HEAD); errors.Is(err, plumbing.ErrReferenceNotFound) {
		return errNoMirror
	}
	cfg, err := st.Config()
	if err != nil {
		return err
	}
	return checkMirrorFormat(cfg)
}

// checkMirrorFormat refuses what go-git's PlainOpen refused (its
// verifyExtensions, same texts): a repository format version other than 0
// and 1, an extension version 0 does not allow, an extension go-git does
// not know (all but "noop" and "noop-v1"). Such a mirror is made again.
func checkMirrorFormat(cfg *config.Config) error {
	version := cfg.Core.RepositoryFormatVersion
	switch version {
	case "", "0", "1":
	default:
		return fmt.Errorf("core.repositoryformatversion not supported: %q", version)
	}
	if cfg.Raw == nil || !cfg.Raw.HasSection("extensions") {
		return nil
	}
	var names, notV0, unknown []string
	for _, opt := range cfg.Raw.Section("extensions").Options {
		names = append(names, strings.ToLower(opt.Key))
	}
	for _, n := range names {
		// go-git's list for version 0 also names partialClone,
		// preciousObjects and worktreeConfig, but compares it with the
		// names lowercased, so only noop passes
		if n != "noop" {
			notV0 = append(notV0, n)
		}
		if n != "noop" && n != "noop-v1" {
			unknown = append(unknown, n)
		}
	}
	if (version == "" || version == "0") && len(notV0) > 0 {
		return fmt.Errorf("core.repositoryformatversion does not support extension: %s", strings.Join(notV0, ", "))
	}
	if len(unknown) > 0 {
		return fmt.Errorf("unknown extension: %s", strings.Join(unknown, ", "))
	}
	return nil
}

// initMirror makes an empty bare repository at dir, as go-git's PlainInit
// did: the directories, HEAD naming refs/heads/master, core.bare = true.
func initMirror(dir string) error {
	st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
	defer st.Close()
	if err := st.Init(); err != nil {
		return err
	}
	if _, err := st.Reference(plumbing.HEAD); err == nil {
		return errors.New("repository already exists")
	} else if !errors.Is(err, plumbing.ErrReferenceNotFound) {
		return err
	}
	if err := st.SetReference(plumbing.NewSymbolicReference(plumbing.HEAD, plumbing.Master)); err != nil {
		return err
	}
	cfg, err := st.Config()
	if err != nil {
		return err
	}
	cfg.Core.IsBare = true
	return st.SetConfig(cfg)
}

func (m *Mirror) recreate() error {
	parent := filepath.Dir(m.dir)
	if err := os.MkdirAll(parent, 0o700); err != nil {
		return fmt.Errorf("git mirror: cache directory %s: %w", parent, err)
	}
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	tmp := m.dir + ".init-" + hex.EncodeToString(rnd[:])
	if err := initMirror(tmp); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("git mirror: creating %s: %w", m.dir, err)
	}
	if err := os.RemoveAll(m.dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("git mirror: removing unreadable %s: %w", m.dir, err)
	}
	if err := os.Rename(tmp, m.dir); err != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("git mirror: creating %s: %w", m.dir, err)
	}
	return nil
}

// ResolveFile returns the file at path in the commit ref names, as fetched
// by the last Fetch: its bytes, the commit id and the blob id. ref is "" or
// "HEAD" (the remote's default branch), a branch or tag name (tags win, as
// in git), a full ref name, or a full commit id. Errors wrap ErrUnknownRef,
// ErrPathNotFound, ErrNotFile or ErrFileTooLarge.
func (m *Mirror) ResolveFile(ref, path string, maxBytes int64) (content []byte, commit, blob string, err error) {
	p, err := cleanTreePath(path)
	if err != nil {
		return nil, "", "", fmt.Errorf("path %q %w", path, err)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	unlock, err := lockMirror(context.Background(), m.lock, true, m.waiting())
	if err != nil {
		return nil, "", "", err
	}
	defer unlock()
	st, err := m.storage(false)
	if err != nil {
		return nil, "", "", err
	}
	defer st.Close()

	ch, err := resolveCommit(st, ref)
	if err != nil {
		return nil, "", "", err
	}
	c, err := mirrorCommit(st, ch)
	if err != nil {
		return nil, "", "", fmt.Errorf("git mirror: commit %s: %w", ch, err)
	}
	entry, err := findEntry(st, c.tree, p)
	if err != nil {
		return nil, "", "", fmt.Errorf("%s at commit %s: %w", p, ch, err)
	}
	switch mode := filemode.FileMode(entry.mode); mode {
	case filemode.Regular, filemode.Executable, filemode.Deprecated:
	case filemode.Dir:
		return nil, "", "", fmt.Errorf("%s at commit %s is a directory: %w", p, ch, ErrNotFile)
	case filemode.Symlink:
		return nil, "", "", fmt.Errorf("%s at commit %s is a symbolic link: %w", p, ch, ErrNotFile)
	case filemode.Submodule:
		return nil, "", "", fmt.Errorf("%s at commit %s is a submodule: %w", p, ch, ErrNotFile)
	default:
		return nil, "", "", fmt.Errorf("%s at commit %s has mode %s: %w", p, ch, mode, ErrNotFile)
	}
	b, err := st.EncodedObject(plumbing.BlobObject, entry.hash)
	if err != nil {
		return nil, "", "", fmt.Errorf("git mirror: blob %s: %w", entry.hash, err)
	}
	if b.Size() > maxBytes {
		return nil, "", "", fmt.Errorf("%s at commit %s is %d bytes, over the %d-byte limit: %w", p, ch, b.Size(), maxBytes, ErrFileTooLarge)
	}
	r, err := b.Reader()
	if err != nil {
		return nil, "", "", fmt.Errorf("git mirror: blob %s: %w", entry.hash, err)
	}
	defer r.Close()
	content, err = io.ReadAll(io.LimitReader(r, maxBytes+1))
	if err != nil {
		return nil, "", "", fmt.Errorf("git mirror: blob %s: %w", entry.hash, err)
	}
	if int64(len(content)) > maxBytes {
		return nil, "", "", fmt.Errorf("%s at commit %s is over the %d-byte limit: %w", p, ch, maxBytes, ErrFileTooLarge)
	}
	return content, ch.String(), entry.hash.String(), nil
}

// HasCommit reports whether the mirror already holds the commit id, so a
// caller pinned to a commit can skip the fetch.
func (m *Mirror) HasCommit(id string) bool {
	if !isHexOID(id) {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	unlock, err := lockMirror(context.Background(), m.lock, true, m.waiting())
	if err != nil {
		return false
	}
	defer unlock()
	st, err := m.storage(false)
	if err != nil {
		return false
	}
	defer st.Close()
	_, err = mirrorCommit(st, plumbing.NewHash(id))
	return err == nil
}

// mirrorContent reads the content of the object h, which must be of type t.
func mirrorContent(st *filesystem.Storage, t plumbing.ObjectType, h plumbing.Hash) ([]byte, error) {
	o, err := st.EncodedObject(t, h)
	if err != nil {
		return nil, err
	}
	r, err := o.Reader()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// mirrorCommit reads and decodes the commit h.
func mirrorCommit(st *filesystem.Storage, h plumbing.Hash) (commitFields, error) {
	data, err := mirrorContent(st, plumbing.CommitObject, h)
	if err != nil {
		return commitFields{}, err
	}
	return parseCommit(data)
}

// resolveCommit turns ref into a commit id, peeling annotated tags.
func resolveCommit(st *filesystem.Storage, ref string) (plumbing.Hash, error) {
	if ref == "" || ref == "HEAD" {
		r, err := storer.ResolveReference(st, plumbing.HEAD)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("HEAD: the remote's default branch is unknown or empty: %w", ErrUnknownRef)
		}
		return peel(st, "HEAD", r.Hash())
	}
	if isHexOID(ref) {
		h := plumbing.NewHash(ref)
		if st.HasEncodedObject(h) != nil {
			return plumbing.ZeroHash, fmt.Errorf("commit %s is not on any branch or tag of the remote: %w", ref, ErrUnknownRef)
		}
		return peel(st, ref, h)
	}
	names := []string{"refs/tags/" + ref, "refs/heads/" + ref}
	if strings.HasPrefix(ref, "refs/") {
		names = []string{ref}
	}
	for _, n := range names {
		r, err := st.Reference(plumbing.ReferenceName(n))
		if err == nil && r.Type() == plumbing.HashReference {
			return peel(st, ref, r.Hash())
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%q is not a branch, tag or full commit id of the remote: %w", ref, ErrUnknownRef)
}

func peel(st *filesystem.Storage, ref string, h plumbing.Hash) (plumbing.Hash, error) {
	for i := 0; i < 10; i++ {
		obj, err := st.EncodedObject(plumbing.AnyObject, h)
		if err != nil {
			return plumbing.ZeroHash, fmt.Errorf("%q names %s, which the mirror lacks: %w", ref, h, ErrUnknownRef)
		}
		switch obj.Type() {
		case plumbing.CommitObject:
			return h, nil
		case plumbing.TagObject:
			target, err := tagTarget(obj)
			if err != nil {
				return plumbing.ZeroHash, fmt.Errorf("git mirror: tag %s: %w", h, err)
			}
			h = target
		default:
			return plumbing.ZeroHash, fmt.Errorf("%q names a %s, not a commit: %w", ref, obj.Type(), ErrUnknownRef)
		}
	}
	return plumbing.ZeroHash, fmt.Errorf("%q: tag chain too long: %w", ref, ErrUnknownRef)
}

// tagTarget decodes the tag object o and returns what it points at.
func tagTarget(o plumbing.EncodedObject) (plumbing.Hash, error) {
	r, err := o.Reader()
	if err != nil {
		return plumbing.ZeroHash, err
	}
	defer r.Close()
	data, err := io.ReadAll(r)
	if err != nil {
		return plumbing.ZeroHash, err
	}
	return parseTagTarget(data)
}

// findEntry walks the tree one segment at a time.
func findEntry(st *filesystem.Storage, tree plumbing.Hash, p string) (*treeEnt, error) {
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		data, err := mirrorContent(st, plumbing.TreeObject, tree)
		if err != nil {
			return nil, fmt.Errorf("git mirror: tree %s: %w", tree, err)
		}
		entries, err := parseTreeEntries(data)
		if err != nil {
			return nil, fmt.Errorf("git mirror: tree %s: %w", tree, err)
		}
		var found *treeEnt
		for j := range entries {
			if entries[j].name == seg {
				found = &entries[j]
				break
			}
		}
		if found == nil {
			return nil, ErrPathNotFound
		}
		if i == len(segs)-1 {
			return found, nil
		}
		if filemode.FileMode(found.mode) != filemode.Dir {
			return nil, fmt.Errorf("%s is not a directory: %w", strings.Join(segs[:i+1], "/"), ErrPathNotFound)
		}
		tree = found.hash
	}
	return nil, ErrPathNotFound
}

// cleanTreePath checks a path inside a repository: relative, slash
// separated, no empty, "." or ".." segments, no NUL.
func cleanTreePath(p string) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "", errors.New("is empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("contains a NUL byte")
	}
	for _, seg := range strings.Split(p, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return "", errors.New("has an empty, \".\" or \"..\" segment")
		}
	}
	return p, nil
}

var urlUserinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#]*@`) })

func redactUserinfo(u string) string {
	return urlUserinfo().ReplaceAllString(u, "${1}[REDACTED]@")
}
