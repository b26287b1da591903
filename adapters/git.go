package adapters

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/fspath"
)

func init() { Register("git", openGit) }

// git URL kinds.
const (
	gitLocal  = "local"  // a path or file:// URL, confined to the roots
	gitHTTP   = "http"   // http(s), through the guarded client
	gitRemote = "remote" // git:// and ssh, whose hosts are checked before fetching and when dialled
)

var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):`) })

// gitSource reads one file from any git repository through a mirror cache.
type gitSource struct {
	spec     Spec
	url      string // spec.URL without the spaces around it: the address checked and the one the mirror dials
	shown    string
	kind     string
	local    string // absolute path, for gitLocal
	httpURL  *url.URL
	host     string
	port     string
	ssh      bool // an ssh URL (or scp-like): ~/.ssh/config may lead host elsewhere
	ref      string
	path     string
	cacheDir string
	lockWait func(gitstore.LockWaitInfo) // Env.LockWait: a wait for the mirror's lock
	warn     func(error)                 // Env.Warn
	roots    []string
	n        *netClient
	max      int64
	password string // from the URL's user information, kept out of errors
}

func openGit(spec Spec, env Env) (Source, error) {
	if spec.URL == "" {
		return broken(fail("", ErrConfig, nil, "git source has no url; write source = { type = \"git\", url = \"https://git.example.com/docs.git\", path = \"policy.md\" }"))
	}
	s := &gitSource{spec: spec, shown: sourcespec.RedactURL(spec.URL), n: newNetClient(env.Network), max: env.MaxBytesOrDefault()}
	p, err := cleanRepoPath(spec.Path)
	if err != nil {
		return broken(fail("", ErrConfig, nil, "git source path %q %v; write the file's path in the repository, such as docs/policy.md", spec.Path, err))
	}
	s.path = p
	s.ref = orDefault(spec.Ref, sourcespec.DefaultGitRef)
	if s.ref != "HEAD" {
		if err := checkRefName(s.ref); err != nil {
			return broken(fail("", ErrConfig, nil, "git source ref %q %v; write a branch, a tag or a full commit id", s.ref, err))
		}
	}
	base := env.BaseDir
	if base == "" {
		base, _ = os.Getwd()
	}
	s.url = strings.TrimSpace(spec.URL)
	raw := s.url
	bracketed, isBracketed, berr := gitstore.ParseBracketedSCP(raw)
	switch {
	case isBracketed:
		// [user@host:port]:path, as git reads it: the scp-like pattern
		// below would take "[host" for the host
		if berr != nil {
			return broken(fail("", ErrConfig, nil, "git source url %s: %v", s.shown, berr))
		}
		s.kind, s.host, s.ssh = gitRemote, bracketed.Host, true
		if bracketed.Port > 0 {
			s.port = strconv.Itoa(bracketed.Port)
		}
	case strings.Contains(raw, "://"):
		u, err := parseSourceURL(raw)
		if err != nil {
			return broken(fail("", ErrConfig, nil, "git source url %s is malformed (%v); write a URL such as https://git.example.com/docs.git", s.shown, err))
		}
		if u.User != nil {
			s.password, _ = u.User.Password()
		}
		switch u.Scheme {
		case "file":
			if u.Host != "" && u.Host != "localhost" {
				return broken(fail("", ErrConfig, nil, "git source url %s names a host; write file:///absolute/path", s.shown))
			}
			s.kind, s.local = gitLocal, filepath.Clean(filepath.FromSlash(u.Path))
		case "http", "https":
			s.kind, s.httpURL = gitHTTP, u
			if err := s.n.g.checkURL(u); err != nil {
				return broken(err.(*Error))
			}
		case "git", "ssh", "git+ssh", "ssh+git":
			s.kind, s.host, s.port, s.ssh = gitRemote, u.Hostname(), u.Port(), u.Scheme != "git"
			if s.host == "" {
				return broken(fail("", ErrConfig, nil, "git source url %s has no host", s.shown))
			}
		default:
			return broken(fail("", ErrConfig, nil, "git source url %s uses %s:, which readproof does not fetch; write an https, ssh, git or file URL, or a local path", s.shown, u.Scheme))
		}
	case scpLike().MatchString(raw) && !filepath.IsAbs(raw) && !strings.HasPrefix(raw, "."):
		s.kind, s.host, s.ssh = gitRemote, scpLike().FindStringSubmatch(raw)[1], true
	default:
		s.kind, s.local = gitLocal, filepath.Clean(filepath.FromSlash(raw))
	}
	if s.kind == gitLocal {
		if !filepath.IsAbs(s.local) {
			s.local = filepath.Join(base, s.local)
		}
		roots := env.Roots
		if len(roots) == 0 {
			roots = []string{base}
		}
		for _, r := range roots {
			if !filepath.IsAbs(r) {
				r = filepath.Join(base, r)
			}
			s.roots = append(s.roots, filepath.Clean(r))
		}
	}
	s.cacheDir = env.CacheDir
	s.lockWait = env.LockWait
	s.warn = env.Warn
	if s.cacheDir == "" {
		dir, err := os.UserCacheDir()
		if err != nil {
			return broken(fail("", ErrConfig, err, "git source %s: no cache directory (%v); set [sources] cache_dir in readproof.toml", s.shown, err))
		}
		s.cacheDir = filepath.Join(dir, "readproof", "git")
	}
	return s, nil
}

func (s *gitSource) what() string { return s.shown + ":" + s.path + "@" + s.ref }

func (s *gitSource) Fetch(ctx context.Context, req Request) (res Result, err error) {
	uri := req.URI
	if err := checkCtx(ctx, uri, "fetching "+s.what()); err != nil {
		return Result{}, err
	}
	scrub := newScrubber([]string{s.password})
	defer func() {
		scrub.result(&res)
		err = scrub.err(err)
	}()

	mirrorURL := s.url
	// The mirror holds the whole repository, so its objects are bounded
	// by a floor above this resource's max_bytes: other files may be
	// larger than the one this resource reads.
	opts := gitstore.MirrorOptions{MaxObjectBytes: max(s.max, gitstore.DefaultMirrorMaxObject), LockWait: s.lockWait}
	switch s.kind {
	case gitLocal:
		// The mirror is keyed by the declared path; the roots check is on
		// the path with every symlink resolved. A repository that is gone
		// can still serve a commit id already in the cache.
		mirrorURL = s.local
		fsrc := &fsSource{roots: s.roots}
		// As the filesystem source does: the roots first, on where the
		// path lands, so a path outside them gets the same answer whether
		// a repository is there or not.
		if landed, err := fspath.Resolve(s.local); err != nil {
			return Result{}, refuse(uri, RuleRoots, "git repository %s cannot be placed inside the allowed roots (%s); %s", s.shown, strings.Join(s.roots, ", "), hintRoots)
		} else if _, _, ok := fsrc.containLexically(landed); !ok {
			return Result{}, refuse(uri, RuleRoots, "git repository %s is outside the allowed roots (%s); %s", s.shown, strings.Join(s.roots, ", "), hintRoots)
		}
		final, err := filepath.EvalSymlinks(s.local)
		switch {
		case err == nil:
			if _, _, ok := fsrc.contain(final); !ok {
				return Result{}, refuse(uri, RuleRoots, "git repository %s resolves to %s, outside the allowed roots (%s); %s", s.shown, final, strings.Join(s.roots, ", "), hintRoots)
			}
			if err := s.checkGitDirs(uri, s.shown); err != nil {
				return Result{}, err
			}
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR):
			if _, _, ok := fsrc.containLexically(s.local); !ok || !hexID().MatchString(s.ref) {
				return Result{}, fail(uri, ErrNotFound, err, "no repository at %s; check url in readproof.toml", s.local)
			}
			// git would still try url.git beside it.
			if err := s.checkGitDirs(uri, s.shown); err != nil {
				return Result{}, err
			}
		default:
			return Result{}, fail(uri, nil, err, "cannot resolve %s: %v", s.local, err)
		}
	case gitHTTP:
		if err := s.n.g.checkURL(s.httpURL); err != nil {
			return Result{}, withURI(uri, err)
		}
		opts.HTTPClient = s.n.c
	case gitRemote:
		host, port := s.host, s.port
		if s.ssh {
			// Read once: what the fetch dials (~/.ssh/config's Hostname
			// for an alias) is the address checked here.
			conf := gitstore.ReadSSHConfig()
			if err := conf.Check(s.host); err != nil {
				// a bastion the user relies on is not gone around
				return Result{}, s.fetchErr(ctx, uri, err)
			}
			if s.warn != nil {
				for _, w := range conf.Warnings(s.host) {
					s.warn(w)
				}
			}
			host, port = conf.Address(host, port)
			opts.SSHConfig = conf
		}
		// the port checked against allow_hosts is the one dialled: a git://
		// URL that names none is fetched at git's port (an ssh one has its
		// port from Address above: the URL's, else Port, else 22)
		if !s.ssh && (port == "" || port == "0") {
			port = "9418"
		}
		if err := s.n.g.checkHost(ctx, host, port); err != nil {
			if perr := ctx.Err(); perr != nil {
				return Result{}, cancelled(uri, "fetching "+s.what(), perr)
			}
			return Result{}, withURI(uri, err)
		}
		// The check above is of the name's addresses now; the connection
		// is checked again on the address it is made to, so a DNS answer
		// that changes in between is caught.
		opts.Dial = s.n.g.dialContext
	}
	m, err := gitstore.OpenMirror(s.cacheDir, mirrorURL, opts)
	if err != nil {
		return Result{}, fail(uri, ErrConfig, err, "git source %s: %v", s.shown, err)
	}
	if !(hexID().MatchString(s.ref) && m.HasCommit(s.ref)) {
		bctx, cancel := s.n.bound(ctx)
		err := m.Fetch(bctx)
		cancel()
		if err != nil {
			return Result{}, s.fetchErr(ctx, uri, err)
		}
	}
	content, commit, blob, err := m.ResolveFile(s.ref, s.path, s.max)
	switch {
	case err == nil:
	case errors.Is(err, gitstore.ErrUnknownRef):
		return Result{}, fail(uri, ErrConfig, err, "ref %q not found in %s (%v); check ref in readproof.toml: a branch, a tag or a full commit id", s.ref, s.shown, err)
	case errors.Is(err, gitstore.ErrPathNotFound):
		return Result{}, fail(uri, ErrNotFound, err, "no file %s in %s at %s; check path and ref in readproof.toml", s.path, s.shown, s.ref)
	case errors.Is(err, gitstore.ErrNotFile):
		return Result{}, refuse(uri, RuleRegular, "%v in %s; point path at a file", err, s.shown)
	case errors.Is(err, gitstore.ErrFileTooLarge):
		return Result{}, fail(uri, ErrTooLarge, nil, "%s is over the %d-byte limit; %s", s.what(), s.max, hintMaxBytes)
	default:
		return Result{}, fail(uri, nil, err, "reading %s: %v", s.what(), err)
	}
	return Result{
		Content:     content,
		ContentType: contentType(s.path, content),
		Revision:    commit + ":" + blob,
		Provenance: map[string]string{
			"source_type": "git",
			"url":         s.shown,
			"ref":         s.ref,
			"path":        s.path,
			"commit":      commit,
			"blob":        blob,
		},
	}, nil
}

// inCachePath reports whether path is the mirror cache directory, inside
// it, or one of the directories above it that making it creates.
func (s *gitSource) inCachePath(path string) bool {
	cache, err := filepath.Abs(s.cacheDir)
	if err != nil || !filepath.IsAbs(path) {
		return false
	}
	within := func(dir, p string) bool {
		r, err := filepath.Rel(dir, p)
		return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator))
	}
	return within(cache, path) || within(path, cache)
}

// fetchErr explains a failed mirror fetch.
func (s *gitSource) fetchErr(parent context.Context, uri string, err error) error {
	if perr := parent.Err(); perr != nil {
		return cancelled(uri, "fetching "+s.what(), perr)
	}
	var ae *Error
	if errors.As(err, &ae) {
		return withURI(uri, ae)
	}
	var badSSHConfig *gitstore.SSHConfigError
	switch {
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		return fail(uri, nil, context.DeadlineExceeded, "fetching %s took longer than %s; %s", s.shown, s.n.g.timeout, hintTimeout)
	case errors.Is(err, gitstore.ErrRepoNotFound):
		return fail(uri, ErrNotFound, err, "no git repository at %s; check url in readproof.toml", s.shown)
	case errors.Is(err, gitstore.ErrAdvertTooLarge):
		return fail(uri, ErrTooLarge, err, "%s lists more refs than readproof reads from a git source (%v); point url at a repository with fewer branches and tags, or %s above it", s.shown, err, hintMaxBytes)
	case errors.Is(err, gitstore.ErrRepoTooLarge):
		return fail(uri, ErrTooLarge, err, "%s is a larger repository than readproof fetches from a git source (%v): its pack may be 10 times the larger of max_bytes and 100 MiB (1,000 MiB unless max_bytes is over 100 MiB), with one object per 2 KiB of that, and its objects (a delta counted with its base) may come to that many bytes once inflated, or to 512 times the pack's; point url at a smaller repository, or %s above 100 MiB", s.shown, err, hintMaxBytes)
	case errors.Is(err, gitstore.ErrDeltaChainTooLarge):
		return fail(uri, ErrTooLarge, err, "%s holds a history of deltas of large files deeper than readproof indexes from a git source (%v): a chain of deltas may make the larger of 512 MiB and twice max_bytes (its objects, each as large as max_bytes allows, are held at once while it is indexed); point url at a repository without such a history, or %s above 256 MiB", s.shown, err, hintMaxBytes)
	case errors.Is(err, gitstore.ErrObjectTooLarge):
		return fail(uri, ErrTooLarge, err, "%s holds a file larger than readproof fetches from a git source (%v); keep large files out of the repository, or %s above it", s.shown, err, hintMaxBytes)
	case errors.As(err, &badSSHConfig):
		// its message ends in what to write instead
		return fail(uri, nil, err, "git source %s: %v", s.shown, badSSHConfig)
	case errors.Is(err, gitstore.ErrAuth):
		var se *gitstore.SSHAuthError
		if errors.As(err, &se) && len(se.Offered) == 0 {
			return fail(uri, nil, err, "git source %s: %v; make one of the keys not offered usable, name the key with IdentityFile for the host in ~/.ssh/config, or load it into ssh-agent (ssh-add FILE)", s.shown, se)
		}
		if se != nil {
			return fail(uri, nil, err, "git source %s: %v; add the public key (the .pub beside the key file) of the key meant for it to the server's authorized keys for %s, or name that key with IdentityFile for the host in ~/.ssh/config, or load it into ssh-agent (ssh-add FILE)", s.shown, se, se.User)
		}
		return fail(uri, nil, err, "%s requires credentials readproof does not have; use a URL the machine can read (an ssh key: the ssh agent's, ~/.ssh/config's IdentityFile for the host, or ~/.ssh/id_ed25519, id_ecdsa or id_rsa; or user information in the URL)", s.shown)
	}
	// A file system error is the cache's (git runs apart: its failures are
	// exit statuses). It goes before net.Error, which a bare errno
	// (ENOTDIR, EACCES, EROFS) satisfies too: a HOME that cannot be written
	// is not a server that cannot be reached.
	var pe *fs.PathError
	if errors.As(err, &pe) && s.inCachePath(pe.Path) {
		return fail(uri, nil, err, "git source %s: its mirror cache cannot be written: %v; set [sources] cache_dir in readproof.toml (or XDG_CACHE_HOME) to a directory this user can write", s.shown, err)
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return fail(uri, nil, err, "cannot reach %s: %v; check the url and that the server is reachable", s.shown, err)
	}
	return fail(uri, nil, err, "fetching %s: %v; check the url, or delete the cache %s if it is damaged", s.shown, err, s.cacheDir)
}
