package gitstore

// The transport: what crosses the network goes through the stock git binary,
// so git's own transports (file paths, file://, git://, ssh, http(s)) and its
// own authentication (ssh keys and agents, credential helpers, http settings
// and credentials from the environment) apply unchanged, along with wire
// protocol v2 and git's pack negotiation. Nothing here reads or stores a
// credential.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// Errors of the transport, matched with errors.Is.
var (
	// ErrNoGit is returned when the git binary cannot be found.
	ErrNoGit = errors.New("git is not installed")
	// ErrGit wraps every failure of a git command (see *GitError).
	ErrGit = errors.New("git command failed")
	// ErrRejected is returned by Push when the remote refused an update
	// (not a fast-forward, or a tag that already exists). Nothing was
	// changed on the remote: pushes are atomic.
	ErrRejected = errors.New("push rejected by the remote")
	// ErrNoRemote is returned for a remote name the configuration lacks.
	ErrNoRemote = errors.New("no such remote")
	// ErrRemoteExists is returned by AddRemote for a name already configured.
	ErrRemoteExists = errors.New("remote already exists")
)

// GitError is a failed git command: the arguments (URLs redacted), the exit
// code and the last lines git wrote on stderr (redacted).
type GitError struct {
	Args     []string
	ExitCode int
	Stderr   string
	Err      error
	// Remote holds every message the server sent (git's "remote: " lines,
	// progress meters left out), redacted: a hook's or a host's reason.
	Remote []string
	// OldGit, when set, says the git that ran is older than readproof's
	// oldest and the failure looks like an option it does not know
	// (gitversion.go).
	OldGit string
	// limit is the limit on open files git said it met (gitLimit), nil
	// when it said none.
	limit error
}

func (e *GitError) Error() string {
	msg := fmt.Sprintf("git %s: exit %d", strings.Join(e.Args, " "), e.ExitCode)
	if e.ExitCode < 0 && e.Err != nil {
		msg = fmt.Sprintf("git %s: %v", strings.Join(e.Args, " "), e.Err)
	}
	if e.Stderr != "" {
		msg += ": " + e.Stderr
	}
	if e.OldGit != "" {
		msg += "; " + e.OldGit
	}
	return msg
}

// Unwrap is ErrGit and, when git could not be started or waited for,
// why (Err: a limit on open files met at its pipes or its fork), so that
// errors.Is sees both and the hint for the cause (hint.OpenFiles) is
// given. Git's exit status (*exec.ExitError) stays hidden: git's own
// failure is ErrGit, and its exit code is ExitCode.
func (e *GitError) Unwrap() []error {
	var ee *exec.ExitError
	if e.Err == nil || errors.As(e.Err, &ee) {
		if e.limit != nil {
			// git ran and failed at its limit on open files
			return []error{ErrGit, e.limit}
		}
		return []error{ErrGit}
	}
	return []error{ErrGit, e.Err}
}

// gitLimit is the limit on open files that git's stderr (text) says git
// met, as a *hint.ChildLimitError, or nil. Git reports a failed open, pipe
// or fork with strerror: "Too many open files" (EMFILE, git's own limit,
// which is the shell's and not readproof's: hint.ChildLimitError), "Too
// many open files in system" (ENFILE). A line the server sent ("remote:")
// is the server's limit, not this machine's, and is not read.
func gitLimit(text string) error {
	for l := range strings.SplitSeq(text, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "remote:") {
			continue
		}
		switch {
		case strings.Contains(l, "Too many open files in system"):
			return &hint.ChildLimitError{Program: "git", Errno: syscall.ENFILE}
		case strings.Contains(l, "Too many open files"):
			return &hint.ChildLimitError{Program: "git", Errno: syscall.EMFILE}
		}
	}
	return nil
}

// TransportOptions tune how git is run.
type TransportOptions struct {
	// Progress, when set, receives git's progress meter (git writes it on
	// stderr when asked with --progress).
	Progress io.Writer
	// Interactive lets git ask for credentials on the terminal. Without it
	// GIT_TERMINAL_PROMPT=0 is set, so a missing credential fails instead
	// of waiting for input.
	Interactive bool
	// MaxFetchBytes bounds what one git fetch of the transport (Fetch,
	// FetchObjects, ProbeCommitAt) may receive: past it git is stopped,
	// its temporary pack removed, and the fetch fails with
	// ErrFetchTooLarge. CopyLocalObjects refuses a larger source the same
	// way before it copies anything. Zero means DefaultMaxFetchBytes.
	MaxFetchBytes int64
	// HookObjects keeps git's object-directory variables (a pre-receive
	// hook's quarantine), so git sees the objects of the push being judged.
	HookObjects bool
}

// Transport runs the stock git binary on one repository.
type Transport struct {
	dir  string
	git  string
	opts TransportOptions
	// objects, when set, is the object directory git is given
	// (GIT_OBJECT_DIRECTORY): a ref view (fetchView) of a store whose
	// objects live elsewhere.
	objects string
	// alternates, when set, is the object directory git reads beside
	// objects (GIT_ALTERNATE_OBJECT_DIRECTORIES): the store's, when a fetch
	// writes into a directory of its own (FetchObjects)
	alternates string
	// listAt: where the configuration says a remote is listed
	// (transport_urls.go)
	listAt listTarget
	// urls: each remote's configuration as one `git config` read it, kept
	// once keepURLs is set (OneCommand) for the transport's life, so the
	// fetch URL, the push URLs and the remote's existence are asked once
	// (remoteURLsOnce)
	urlsMu   sync.Mutex
	keepURLs bool
	urls     map[string]readURLs
	// urlsFrom, when set, is the transport whose configuration questions
	// this one's fetch guard asks (fetchGuard): a ref view's (fetchView)
	// are its store's, kept there when it serves one command
	urlsFrom *Transport
	// proxies: for each http(s) URL, fetchGuard's answer of the user's
	// proxy settings, kept as urls is (keepURLs)
	proxies map[string]proxyGuard
}

// OneCommand says the transport serves one command (a push, a pull, a
// clone): the configuration it reads of a remote (URLs, insteadOf rules,
// whether the remote is configured) is read by one `git config` and kept
// until the transport itself changes the configuration (AddRemote,
// RemoveRemote, InitBare), instead of being read again by each question.
// A configuration changed by another process meanwhile is not seen, as it
// would not be by git commands already started; a transport kept across
// commands must not be marked.
func (t *Transport) OneCommand() *Transport {
	t.urlsMu.Lock()
	t.keepURLs = true
	t.urlsMu.Unlock()
	return t
}

// RemoteConfig is a remote named in a repository's configuration.
type RemoteConfig struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// PushStatus is git's verdict on one ref of a push (`git push --porcelain`).
type PushStatus struct {
	// Flag is git's flag: ' ' fast-forward, '*' new ref, '-' deleted,
	// '+' forced, '=' up to date, '!' rejected.
	Flag    byte
	From    string
	To      string
	Summary string
}

// Rejected reports whether the remote refused this ref.
func (p PushStatus) Rejected() bool { return p.Flag == '!' }

// RevListCommit is one line of `git rev-list --parents`.
type RevListCommit struct {
	ID      OID
	Parents []OID
}

// NewTransport returns a transport for the repository at gitDir (a store's
// Path). It fails with ErrNoGit when git is not on PATH.
func NewTransport(gitDir string, opts TransportOptions) (*Transport, error) {
	git, err := findGit()
	if err != nil {
		return nil, fmt.Errorf("%w: %v: install git (https://git-scm.com) to share stores; readproof itself reads and writes stores without it", ErrNoGit, err)
	}
	return &Transport{dir: gitDir, git: git, opts: opts}, nil
}

// locationVars point git at another repository; a readproof run from a git
// hook inherits them, so they are removed.
var locationVars = []string{"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_OBJECT_DIRECTORY",
	"GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_NAMESPACE", "GIT_COMMON_DIR", "GIT_PREFIX",
	"GIT_QUARANTINE_PATH", "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM"}

func (t *Transport) env() []string {
	drop := map[string]bool{}
	for _, v := range locationVars {
		drop[v] = true
	}
	if t.opts.HookObjects {
		drop["GIT_OBJECT_DIRECTORY"], drop["GIT_ALTERNATE_OBJECT_DIRECTORIES"], drop["GIT_QUARANTINE_PATH"] = false, false, false
	}
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if drop[name] || (!t.opts.Interactive && name == "GIT_TERMINAL_PROMPT") {
			continue
		}
		env = append(env, kv)
	}
	if !t.opts.Interactive {
		env = append(env, "GIT_TERMINAL_PROMPT=0")
	}
	// git judges the objects as stored: a refs/replace/ ref (planted in a
	// store, or in a guarded remote by someone with write access to it)
	// would otherwise show ancestry checks and history walks a history
	// that is not there (verify and evidence verify report such refs)
	env = append(env, "GIT_NO_REPLACE_OBJECTS=1")
	// The same holds for info/grafts, which git 2.39 still reads: an empty
	// GIT_GRAFT_FILE names no file, so no graft is read (nor is the
	// deprecation hint printed, as a readable empty file would make it)
	env = append(env, "GIT_GRAFT_FILE=")
	if t.objects != "" {
		env = append(env, "GIT_OBJECT_DIRECTORY="+t.objects)
	}
	if t.alternates != "" {
		env = append(env, "GIT_ALTERNATE_OBJECT_DIRECTORIES="+alternateEntry(t.alternates))
	}
	return env
}

// alternateEntry is dir as the one entry of GIT_ALTERNATE_OBJECT_DIRECTORIES.
// Git splits that variable at the path list separator (':'), so a store
// whose path holds one, or starts with a double quote, is given C-quoted,
// which git unquotes; unquoted, git read two directories, neither the
// store's, and a pull fetched the remote's whole history each time.
func alternateEntry(dir string) string {
	if !strings.ContainsRune(dir, filepath.ListSeparator) && !strings.HasPrefix(dir, `"`) {
		return dir
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(dir); i++ {
		switch c := dir[i]; {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
			fmt.Fprintf(&b, "\\%03o", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// run runs git on the repository and returns its stdout. When progress is
// true, git's stderr is copied to opts.Progress as it comes.
func (t *Transport) run(ctx context.Context, progress bool, args ...string) ([]byte, error) {
	return t.runInput(ctx, progress, nil, args...)
}

// runInput is run with stdin read from in (nil: no input).
func (t *Transport) runInput(ctx context.Context, progress bool, in io.Reader, args ...string) ([]byte, error) {
	return t.runAt(ctx, progress, in, "", args...)
}

// urlEnv carries the URL of runAt's rule to git.
const urlEnv = "READPROOF_GIT_URL"

// runAt is runInput of a command given the URL url that git already
// rewrote (PushURLs, RemoteFetchURL): git rewrites every URL it is given
// by the url.<base>.insteadOf rules (for a push, pushInsteadOf first), so
// a URL a rule rewrote could be rewritten once more (rules b -> c and
// a -> b took a remote's a:r to c:r, where git's own push or fetch goes to
// b:r). A rule rewriting url to itself, longer than any other rule that
// matches it (the whole URL), pins it; it reaches git through the
// environment (--config-env), so the URL is never split at an '='.
// With url "", nothing is pinned.
func (t *Transport) runAt(ctx context.Context, progress bool, in io.Reader, url string, args ...string) ([]byte, error) {
	var stdout bytes.Buffer
	err := t.runTo(ctx, progress, in, url, &stdout, args...)
	return stdout.Bytes(), err
}

// runTo is runAt writing git's standard output to stdout as it comes (a
// listing parsed while git writes it, not held whole first).
func (t *Transport) runTo(ctx context.Context, progress bool, in io.Reader, url string, stdout io.Writer, args ...string) error {
	full := []string{"--git-dir=" + t.dir, "-c", "gc.auto=0", "-c", "maintenance.auto=false"}
	env := t.env()
	if url != "" {
		kind := "insteadOf"
		if len(args) > 0 && args[0] == "push" {
			kind = "pushInsteadOf"
		}
		full = append(full, "--config-env=url."+url+"."+kind+"="+urlEnv)
		env = append(env, urlEnv+"="+url)
	}
	// every git fetch is kept from downloading a pack from an address
	// the remote names (packfile URIs)
	fetchFrom, guarded := fetchRemote(args)
	var temps map[string]bool
	if guarded {
		opts, genv := t.fetchGuard(ctx, fetchFrom)
		full, env = append(full, opts...), append(env, genv...)
		temps = packTemps(t.objectDir())
	}
	full = append(full, args...)
	cmd := exec.CommandContext(ctx, t.git, full...)
	cmd.Env = env
	endsWithUs(cmd)
	killsItsChildren(cmd)
	if in != nil {
		cmd.Stdin = in
	} else if null := devNull(); null != nil {
		cmd.Stdin = null
	}
	cmd.WaitDelay = 5 * time.Second
	stderr := &tailBuffer{max: 8 << 10}
	cmd.Stdout = stdout
	if progress && t.opts.Progress != nil {
		cmd.Stderr = io.MultiWriter(stderr, &redactingWriter{w: t.opts.Progress})
	} else {
		cmd.Stderr = stderr
	}
	err := cmd.Run()
	if err != nil && guarded && cmd.Process != nil {
		removeFetchKeeps(t.objectDir(), cmd.Process.Pid)
	}
	if err != nil {
		forgetGit(t.git, err)
		text := RedactText(stderr.String())
		ge := &GitError{Args: redactArgs(args), ExitCode: -1, Stderr: stderrSummary(text), Err: err, Remote: remoteLines(text), limit: gitLimit(text)}
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			ge.ExitCode = ee.ExitCode()
			ge.OldGit = oldGitNote(t.git, ge.ExitCode, text)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %w", ctx.Err(), ge)
		}
		if guarded {
			return packfileURIRefused(ge, t.objectDir(), fetchFrom, temps)
		}
		return ge
	}
	return nil
}

// exitCode returns the exit code of a *GitError, or -1.
func exitCode(err error) int {
	var ge *GitError
	if errors.As(err, &ge) {
		return ge.ExitCode
	}
	return -1
}

// ---- remotes ----

// CheckRemoteName validates a remote name: [A-Za-z0-9][A-Za-z0-9._-]{0,63},
// no "..", not ending in "." or ".lock" (it becomes a ref component).
func CheckRemoteName(name string) error {
	if len(name) > 64 || !remoteName().MatchString(name) || strings.Contains(name, "..") || strings.HasSuffix(name, ".") || strings.HasSuffix(name, ".lock") {
		// A URL given where a name belongs (`readproof push https://u:TOKEN@host/r.git`)
		// is shown with its password or token redacted.
		err := fmt.Errorf("remote name %q is not valid: use letters, digits, '.', '_' and '-', starting with a letter or digit (for example origin)", RedactURL(name))
		if strings.Contains(name, "://") || strings.Contains(name, "@") {
			return hint.With(err, "commands take a remote's name, not its URL: add the URL once with `readproof remote add NAME URL`, then use NAME")
		}
		return hint.With(err, "`readproof remote list` shows the remotes configured for this store")
	}
	return nil
}

// remoteName is checked with the length apart: a bounded repetition
// ({0,63}) cost every readproof process about 0.2 ms to compile at start.
var remoteName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`) })

// Remotes lists the remotes with a URL in the repository's configuration,
// sorted by name. URLs are returned as configured (callers redact them
// with RedactURL before printing).
func (t *Transport) Remotes(ctx context.Context) ([]RemoteConfig, error) {
	out, err := t.run(ctx, false, "config", "--null", "--get-regexp", `^remote\..*\.url$`)
	if exitCode(err) == 1 { // no match
		return []RemoteConfig{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list remotes: %w", err)
	}
	return parseRemoteConfig(out), nil
}

// parseRemoteConfig parses `git config --null --get-regexp` output for
// remote.<name>.url keys: records "key\nvalue\x00".
func parseRemoteConfig(out []byte) []RemoteConfig {
	list := []RemoteConfig{}
	seen := map[string]int{}
	for _, rec := range bytes.Split(out, []byte{0}) {
		key, value, ok := bytes.Cut(rec, []byte{'\n'})
		if !ok {
			continue
		}
		k := string(key)
		if !strings.HasPrefix(k, "remote.") || !strings.HasSuffix(k, ".url") || len(k) <= len("remote..url") {
			continue
		}
		name := k[len("remote.") : len(k)-len(".url")]
		if i, dup := seen[name]; dup { // the last value wins, as in git
			list[i].URL = string(value)
			continue
		}
		seen[name] = len(list)
		list = append(list, RemoteConfig{Name: name, URL: string(value)})
	}
	sortRemotes(list)
	return list
}

func sortRemotes(list []RemoteConfig) {
	for i := 1; i < len(list); i++ {
		for j := i; j > 0 && list[j].Name < list[j-1].Name; j-- {
			list[j], list[j-1] = list[j-1], list[j]
		}
	}
}

// RemoteURL returns the URL configured for a remote, or ErrNoRemote.
func (t *Transport) RemoteURL(ctx context.Context, name string) (string, error) {
	if err := CheckRemoteName(name); err != nil {
		return "", err
	}
	out, err := t.run(ctx, false, "config", "--get", "remote."+name+".url")
	if exitCode(err) == 1 {
		return "", fmt.Errorf("remote %s: %w", name, ErrNoRemote)
	}
	if err != nil {
		return "", fmt.Errorf("remote %s: %w", name, err)
	}
	return strings.TrimRight(string(out), "\n"), nil
}

// RemoteFetchURL returns the URL git fetches from for a configured remote:
// its first URL with url.<base>.insteadOf applied, what `git ls-remote
// --get-url NAME` prints. A remote missing from the configuration gives
// ErrNoRemote, as RemoteURL does. One git process (`git config`,
// transport_urls.go) answers both questions; what that does not settle is
// asked as before: `git remote get-url`, and for a remote that command
// does not know (one set only in a global configuration) RemoteURL and
// `git ls-remote --get-url`.
func (t *Transport) RemoteFetchURL(ctx context.Context, name string) (string, error) {
	if err := CheckRemoteName(name); err != nil {
		return "", err
	}
	switch r, answer := t.remoteURLsOnce(ctx, name); answer {
	case urlsKnown:
		return checkedURL(name, r.fetchURL())
	case urlsNone:
		return "", fmt.Errorf("remote %s: %w", name, ErrNoRemote)
	}
	if out, err := t.run(ctx, false, "remote", "get-url", "--", name); err == nil {
		if u := strings.TrimRight(string(out), "\n"); u != "" && !strings.Contains(u, "\n") {
			return checkedURL(name, u)
		}
	}
	if _, err := t.RemoteURL(ctx, name); err != nil {
		return "", err
	}
	out, err := t.run(ctx, false, "ls-remote", "--get-url", "--", name)
	if err != nil {
		return "", fmt.Errorf("remote %s: %w", name, err)
	}
	return checkedURL(name, strings.TrimRight(string(out), "\n"))
}

// checkedURL is url when CheckRemoteURL accepts it for remote name.
func checkedURL(name, url string) (string, error) {
	if err := CheckRemoteURL(name, url); err != nil {
		return "", err
	}
	return url, nil
}

// checkedURLs is urls when CheckRemoteURL accepts each for remote name.
func checkedURLs(name string, urls []string) ([]string, error) {
	for _, u := range urls {
		if err := CheckRemoteURL(name, u); err != nil {
			return nil, err
		}
	}
	return urls, nil
}

// CheckRemoteURL refuses a URL readproof does not hand to git for remote
// name: an empty one, one with a newline or NUL, one git would read as an
// option ("-..."), and the remote-helper URLs of git's own two dangerous
// helpers: "ext::<command>" runs any command and "fd::" speaks over
// inherited descriptors. Only git's default protocol.allow stands between
// such a URL and git, and a user's configuration may loosen it. Other
// "<transport>::<address>" URLs (codecommit::, gcrypt::) run the
// git-remote-<transport> program the user installed, and are git's to
// decide, as any other URL is.
func CheckRemoteURL(name, url string) error {
	if url == "" || strings.ContainsAny(url, "\n\x00") || strings.HasPrefix(url, "-") {
		return fmt.Errorf("remote %s: URL %q is not valid: give a repository path or a file://, git://, ssh:// or http(s):// URL", name, RedactURL(url))
	}
	helper, _ := remoteHelper(url)
	var does string
	switch helper {
	case "ext":
		does = "the command it names"
	case "fd":
		does = "a transport over inherited file descriptors"
	}
	if does != "" {
		return hint.With(fmt.Errorf("remote %s: URL %q is a remote-helper URL (%s::), which makes git run %s: readproof never hands such a URL to git",
			name, RedactURL(url), helper, does), "give a repository path or a file://, git://, ssh:// or http(s):// URL (readproof remote add NAME URL, or git config remote.NAME.url)")
	}
	return nil
}

// CheckURLPassword refuses a URL for remote name that holds a password
// (user:password@, in any scheme, also inside a remote-helper URL): a
// remote's URL is kept in the store's config, and readproof never stores a
// credential. git's own transfer.credentialsInUrl=die refuses the same
// URLs. A lone user@ is kept (git asks a credential helper for its
// password), unless it is an access token of a git host (GitHub's ghp_ and
// github_pat_, GitLab's glpat-, ...), which those hosts take as the user
// name of https://TOKEN@host/.
func CheckURLPassword(name, url string) error {
	found, token := false, false
	bare := urlUserinfoAny().ReplaceAllStringFunc(url, func(m string) string {
		_, prefix, info := splitUserinfo(m)
		if strings.Contains(info, ":") {
			found = true
			return prefix
		}
		if accessTokenUser(strings.TrimSuffix(info, "@")) {
			found, token = true, true
			return prefix
		}
		return m
	})
	if !found {
		return nil
	}
	what := "a password"
	if token {
		what = "an access token (as its user name)"
	}
	return hint.With(fmt.Errorf("remote %s: URL %q holds %s: readproof never stores a credential, and a remote's URL is kept in the store's config", name, RedactURL(url), what),
		"give the URL without it, "+text.ShellArg(bare)+", and let git's credential helper supply it (git config --global credential.helper NAME; `git help credential`), or use an ssh URL; nothing was written")
}

// accessTokenUser reports whether user, a URL's user part, is an access
// token by its host's prefix for one.
func accessTokenUser(user string) bool {
	for _, p := range []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "gloas-", "gldt-"} {
		if strings.HasPrefix(user, p) && len(user) > len(p)+8 {
			return true
		}
	}
	return false
}

// remoteHelper returns the transport of a "<transport>::<address>" URL,
// as git's transport_get reads one.
func remoteHelper(url string) (string, bool) {
	i := 0
	for i < len(url) {
		c := url[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') {
			break
		}
		i++
	}
	return url[:i], strings.HasPrefix(url[i:], "::")
}

// AddRemote configures remote name with url and the given fetch refspecs
// (replacing git's default), and turns off automatic tag following. It
// fails with ErrRemoteExists when the name is configured already.
func (t *Transport) AddRemote(ctx context.Context, name, url string, fetch []string) error {
	_, err := t.AddRemoteURL(ctx, name, url, fetch)
	return err
}

// AddRemoteURL is AddRemote that also returns the URL git will fetch from
// (RemoteFetchURL) when it is url itself, which is when no
// url.<base>.insteadOf rule may apply to url (none has a value that is a
// prefix of it), no include made once a remote's URL matches is
// configured, and GIT_CONFIG is not set; otherwise "" (ask
// RemoteFetchURL).
func (t *Transport) AddRemoteURL(ctx context.Context, name, url string, fetch []string) (string, error) {
	if err := CheckRemoteName(name); err != nil {
		return "", err
	}
	if err := CheckRemoteURL(name, url); err != nil {
		return "", err
	}
	if err := CheckURLPassword(name, url); err != nil {
		return "", err
	}
	taken, rewrites, hides, listed, err := t.remoteTaken(ctx, name, url)
	if err != nil {
		return "", fmt.Errorf("add remote %s: %w", name, err)
	}
	if taken {
		return "", fmt.Errorf("remote %s: %w", name, ErrRemoteExists)
	}
	// One git process asked; the section is written here, in the bytes `git
	// remote add`, `git config --unset-all` and `git config --add` per
	// refspec wrote (transport_config.go).
	t.forgetURLs()
	if err := t.appendConfig(remoteSection(name, url, fetch)); err != nil {
		return "", unpublished(fmt.Errorf("add remote %s: %w", name, err))
	}
	// A clone asks for the fetch URL next when a rule may rewrite it: the
	// same output answers (seedURLs).
	t.seedURLs(name, url, fetch, listed)
	if rewrites || gitConfigRedirected() {
		// a rule may rewrite url, or `git config` read another file than
		// git fetch will: git resolves the URL when it fetches
		return "", nil
	}
	if !hides {
		t.listAt = listTarget{name: name, url: url}
	}
	return url, nil
}

// RemoveRemote deletes a remote's configuration and the refs its fetch
// refspecs map to (git remote remove). A remote not configured gives
// ErrNoRemote; one whose URL the repository's config file sets is removed
// without asking git first (RemoteInRepoConfig).
func (t *Transport) RemoveRemote(ctx context.Context, name string) error {
	if err := CheckRemoteName(name); err != nil {
		return err
	}
	if !t.RemoteInRepoConfig(name) {
		if _, err := t.RemoteURL(ctx, name); err != nil {
			return err
		}
	}
	t.forgetURLs()
	if _, err := t.run(ctx, false, "remote", "remove", "--", name); err != nil {
		return fmt.Errorf("remove remote %s: %w", name, err)
	}
	return nil
}

// ---- network ----

// LsRemote lists the refs of a remote (a configured name or a URL) whose
// names start with one of prefixes (all refs when none is given).
func (t *Transport) LsRemote(ctx context.Context, remote string, prefixes ...string) ([]Ref, error) {
	args := []string{"ls-remote", "--refs", "--", remote}
	for _, p := range prefixes {
		args = append(args, p+"*")
	}
	out, err := t.run(ctx, false, args...)
	if err != nil {
		return nil, fmt.Errorf("list refs of %s: %w", RedactURL(remote), err)
	}
	refs, err := parseLsRemote(out)
	if err != nil {
		return nil, fmt.Errorf("list refs of %s: %w", RedactURL(remote), err)
	}
	var keep []Ref
	for _, r := range refs {
		if len(prefixes) == 0 || hasAnyPrefix(r.Name, prefixes) {
			keep = append(keep, r)
		}
	}
	return keep, nil
}

// LsRemoteHead lists every ref of a remote (a configured name or a URL), as
// LsRemote with no prefix does, and the ref the remote's HEAD names (""
// when HEAD is detached or names no existing ref), as RemoteHead returns
// it: one `git ls-remote --symref` instead of two listings.
//
// A remote whose URL this transport's configuration question settled
// (PushURLs, PushTargets, RemoteFetchURL, AddRemoteURL) and that names a
// repository on this machine is read in place when that gives git's
// answer (listLocal), without a git process.
func (t *Transport) LsRemoteHead(ctx context.Context, remote string) ([]Ref, string, error) {
	if t.listAt.name == remote && remote != "" {
		refs, head, ok, err := listLocal(t.listAt.url)
		if err != nil {
			return nil, "", err
		}
		if ok {
			return refs, head, nil
		}
	}
	return t.lsRemoteSymref(ctx, remote)
}

// lsRemoteSymref runs `git ls-remote --symref` of remote, with the
// configuration pre (-c name=value pairs) first.
func (t *Transport) lsRemoteSymref(ctx context.Context, remote string, pre ...string) ([]Ref, string, error) {
	// parsed as git writes it (lsRemoteParser): at 10^6 refs the output
	// is 79 MB, which was grown into a buffer, copied whole into a string
	// and only then parsed
	p := newLsRemoteParser()
	if err := t.runTo(ctx, false, nil, "", p, append(pre, "ls-remote", "--symref", "--", remote)...); err != nil {
		return nil, "", fmt.Errorf("list refs of %s: %w", RedactURL(remote), err)
	}
	refs, head, err := p.finish()
	if err != nil {
		return nil, "", fmt.Errorf("list refs of %s: %w", RedactURL(remote), err)
	}
	return refs, head, nil
}

// IsGitProtocolURL reports whether url is a git:// URL (git's own
// protocol: no credentials, so no prompt; see LsRemoteWhole).
func IsGitProtocolURL(url string) bool {
	return len(url) >= 6 && strings.EqualFold(url[:6], "git://")
}

// LsRemoteWhole is LsRemoteHead for a caller that takes every ref and does
// not need an empty remote's unborn HEAD (a clone): from a git:// URL it
// lists with protocol v0. Git 2.39 writes a protocol v2 ls-refs request in
// several small writes on a TCP socket without TCP_NODELAY, so the
// server's delayed acknowledgement holds its last part about 40 ms (git
// ls-remote of 2,000 refs from git daemon on 127.0.0.1: 60 ms, 10 ms with
// v0); a v0 server advertises every ref unasked, the same refs a listing
// without a prefix asks v2 for. http(s) and ssh are listed as
// LsRemoteHead lists them.
func (t *Transport) LsRemoteWhole(ctx context.Context, remote, url string) ([]Ref, string, error) {
	if !IsGitProtocolURL(url) {
		return t.LsRemoteHead(ctx, remote)
	}
	return t.lsRemoteSymref(ctx, remote, "-c", "protocol.version=0")
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// parseLsRemote parses "<oid>\t<ref>\n" lines.
func parseLsRemote(out []byte) ([]Ref, error) {
	var refs []Ref
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		r, err := parseLsRemoteLine(line)
		if err != nil {
			return nil, err
		}
		refs = append(refs, r)
	}
	return refs, nil
}

// parseLsRemoteLine parses one "<oid>\t<ref>" line.
func parseLsRemoteLine(line string) (Ref, error) {
	oid, name, ok := strings.Cut(line, "\t")
	if !ok || !isHexOID(oid) || CheckRefName(name) != nil {
		return Ref{}, fmt.Errorf("unexpected ls-remote line %q", truncate([]byte(line)))
	}
	return Ref{Name: name, OID: OID(oid)}, nil
}

// Fetch runs `git fetch` from remote with the given refspecs, pruning
// destination refs whose source is gone. It never follows tags and checks
// incoming objects (fetch.fsckObjects). What it receives is bounded by
// MaxFetchBytes (boundedFetch).
//
// The destinations are tracking refs (a quarantine that each fetch forces
// anew), so git makes the fetched objects durable but not each ref it
// writes (core.fsync without "reference"): git fsyncs every loose ref
// file, which made a clone of 2,000 runs spend seconds in fsync. A crash
// may lose a tracking ref; the next fetch writes it again. Refs that
// records live in are only ever written by Update, which makes them durable.
func (t *Transport) Fetch(ctx context.Context, remote string, refspecs []string) error {
	args := []string{"-c", "fetch.fsckObjects=true", "-c", bigObjects, "-c", fetchUnpackLimit, "-c", transferUnpackLimit, "-c", "core.fsync=objects,pack-metadata,derived-metadata",
		"fetch", "--no-tags", "--prune", "--no-write-fetch-head", "--no-auto-gc"}
	args = append(args, t.localUploadPack(ctx, remote)...)
	args = append(args, t.progressFlag())
	args = append(args, "--", remote)
	args = append(args, refspecs...)
	if err := boundedFetch(ctx, t.dir, t.shownRemote(remote), t.maxFetch(), func(ctx context.Context) error { _, err := t.run(ctx, true, args...); return err }); err != nil {
		return fmt.Errorf("fetch from %s: %w", RedactURL(remote), err)
	}
	return nil
}

func (t *Transport) progressFlag() string {
	if t.opts.Progress != nil {
		return "--progress"
	}
	return "--quiet"
}

// Push runs one atomic `git push` of refspecs to remote (never forced: a
// refspec starting with '+' is refused): a URL as PushURLs names it, which
// git takes as it is (runAt), or a remote's name. Either every ref is updated or
// none is. A refusal by the remote returns the statuses and an error
// wrapping ErrRejected.
func (t *Transport) Push(ctx context.Context, remote string, refspecs []string) ([]PushStatus, error) {
	for _, s := range refspecs {
		if strings.HasPrefix(s, "+") || strings.HasPrefix(s, "-") {
			return nil, fmt.Errorf("push refspec %q: forced updates are not allowed: pushes never overwrite remote data", s)
		}
	}
	if len(refspecs) == 0 {
		return nil, nil
	}
	args := []string{"push", "--atomic", "--porcelain", "--no-verify", t.progressFlag(), "--", remote}
	args = append(args, refspecs...)
	pin := remote
	if CheckRemoteName(remote) == nil {
		pin = "" // a remote's name: git resolves it
	}
	out, err := t.runAt(ctx, true, nil, pin, args...)
	statuses := parsePorcelain(out)
	// Name the refs the remote refused; with --atomic every other ref is
	// reported "atomic push failed", which says nothing about the cause.
	var rejected, atomic []string
	for _, s := range statuses {
		if s.Rejected() {
			item := fmt.Sprintf("%s (%s)", s.To, s.Summary)
			if isAtomicFollower(s.Summary) {
				atomic = append(atomic, item)
			} else {
				rejected = append(rejected, item)
			}
		}
	}
	if len(rejected) == 0 {
		rejected = atomic
	}
	if len(rejected) > 0 {
		return statuses, newPushError(fmt.Sprintf("push to %s: %v: %s", RedactURL(remote), ErrRejected, summarizeList(rejected, 5)), statuses, err)
	}
	if err != nil {
		return statuses, fmt.Errorf("push to %s: %w", RedactURL(remote), err)
	}
	return statuses, nil
}

func summarizeList(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

// parsePorcelain parses `git push --porcelain` output: lines
// "<flag>\t<from>:<to>\t<summary>" between "To <url>" and "Done".
func parsePorcelain(out []byte) []PushStatus {
	var list []PushStatus
	for _, line := range strings.Split(string(out), "\n") {
		if len(line) < 3 || line[1] != '\t' || strings.IndexByte(" *-+=!", line[0]) < 0 {
			continue
		}
		refs, summary, _ := strings.Cut(line[2:], "\t")
		from, to, ok := strings.Cut(refs, ":")
		if !ok {
			continue
		}
		list = append(list, PushStatus{Flag: line[0], From: from, To: to, Summary: summary})
	}
	return list
}

// ---- history queries (stock git is faster than walking in Go) ----

// RevList lists the commits reachable from include and not from exclude,
// each with its parents (`git rev-list --parents`).
func (t *Transport) RevList(ctx context.Context, include, exclude []OID) ([]RevListCommit, error) {
	if len(include) == 0 {
		return nil, nil
	}
	args := []string{"rev-list", "--parents"}
	for _, id := range include {
		if !isHexOID(string(id)) {
			return nil, fmt.Errorf("rev-list: %q is not an object id", id)
		}
		args = append(args, string(id))
	}
	for _, id := range exclude {
		if !isHexOID(string(id)) {
			return nil, fmt.Errorf("rev-list: %q is not an object id", id)
		}
		args = append(args, "^"+string(id))
	}
	args = append(args, "--")
	out, err := t.run(ctx, false, args...)
	if err != nil {
		return nil, fmt.Errorf("list history: %w", err)
	}
	return parseRevList(out)
}

// parseRevList parses `git rev-list --parents` lines: ids separated by
// single spaces.
func parseRevList(out []byte) ([]RevListCommit, error) {
	var list []RevListCommit
	for _, line := range strings.Split(string(out), "\n") {
		if line == "" {
			continue
		}
		f := strings.Split(line, " ")
		var c RevListCommit
		for i, id := range f {
			if !isHexOID(id) {
				return nil, fmt.Errorf("unexpected rev-list line %q", truncate([]byte(line)))
			}
			if i == 0 {
				c.ID = OID(id)
			} else {
				c.Parents = append(c.Parents, OID(id))
			}
		}
		list = append(list, c)
	}
	return list, nil
}

// IsAncestor reports whether commit a is reachable from commit b (a == b
// counts).
func (t *Transport) IsAncestor(ctx context.Context, a, b OID) (bool, error) {
	if !isHexOID(string(a)) || !isHexOID(string(b)) {
		return false, fmt.Errorf("merge-base: %q or %q is not an object id", a, b)
	}
	_, err := t.run(ctx, false, "merge-base", "--is-ancestor", string(a), string(b))
	if err == nil {
		return true, nil
	}
	if exitCode(err) == 1 {
		return false, nil
	}
	return false, fmt.Errorf("compare history: %w", err)
}

// ---- redaction ----

var (
	// scheme:// and scheme:/ (one slash, a typo git takes for host:path,
	// where what was meant for a password is still the user's secret)
	urlUserinfoAny = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`([a-zA-Z][a-zA-Z0-9+.-]*://?)[^/?#@\s'"]*@`) })
	authHeader     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)(authorization:\s*)\S.*`) })
)

// RedactURL replaces the user information of a URL with [REDACTED] when it
// can hold a secret: any user:password@, and a lone user@ of http(s) and
// other schemes where it is a token. The user of an ssh URL
// (ssh://git@host/...) is a login name, not a credential, and is kept;
// other strings are returned unchanged.
func RedactURL(u string) string { return urlUserinfoAny().ReplaceAllStringFunc(u, redactURLUserinfo) }

func redactURLUserinfo(m string) string {
	scheme, prefix, info := splitUserinfo(m)
	info = strings.TrimSuffix(info, "@")
	switch strings.ToLower(scheme) {
	case "ssh", "git+ssh", "ssh+git":
		if !strings.Contains(info, ":") {
			return m
		}
	}
	return prefix + "[REDACTED]@"
}

// splitUserinfo splits a match of urlUserinfoAny into its scheme, what
// comes before the user information (the scheme, ':' and its one or two
// slashes) and the user information with its '@'.
func splitUserinfo(m string) (scheme, prefix, info string) {
	i := strings.Index(m, ":/")
	j := i + 2
	if j < len(m) && m[j] == '/' {
		j++
	}
	return m[:i], m[:j], m[j:]
}

// RedactText redacts every URL's user information that can hold a secret
// (RedactURL) and any Authorization header value in free text (git's
// messages).
func RedactText(s string) string {
	return authHeader().ReplaceAllString(urlUserinfoAny().ReplaceAllStringFunc(s, redactURLUserinfo), "${1}[REDACTED]")
}

func redactArgs(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = RedactURL(a)
	}
	if len(out) > 8 {
		out = append(out[:8:8], fmt.Sprintf("(%d more)", len(args)-8))
	}
	return out
}

// stderrSummary is what a GitError keeps of git's stderr: its last four
// lines, after the line that names the cause when git puts its advice
// after it (a repository another user owns: "detected dubious ownership").
func stderrSummary(text string) string {
	last := lastLines(text, 4)
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.Contains(l, "detected dubious ownership") && !strings.Contains(last, l) {
			return l + "; " + last
		}
	}
	return last
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(strings.ReplaceAll(s, "\r", "\n")), "\n")
	var keep []string
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) > n {
		keep = keep[len(keep)-n:]
	}
	return strings.Join(keep, "; ")
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > b.max {
		b.buf = append([]byte(nil), b.buf[len(b.buf)-b.max:]...)
	}
	return len(p), nil
}

func (b *tailBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return string(b.buf)
}

// redactingWriter redacts user information from each write (git writes its
// progress and messages a line or a meter update at a time).
type redactingWriter struct{ w io.Writer }

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, RedactText(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// PushURLs returns the URLs a push to the named remote goes to
// (remote.<name>.pushurl, else its url), with git's insteadOf and
// pushInsteadOf rewriting applied: what `git remote get-url --push --all`
// prints, read from one `git config` (transport_urls.go) when that settles
// it. A remote that command does not know gives ErrNoRemote.
func (t *Transport) PushURLs(ctx context.Context, name string) ([]string, error) {
	urls, pushErr, _, asked := t.pushTargets(ctx, name)
	if asked {
		return urls, pushErr
	}
	urls, err := t.pushURLsGit(ctx, name)
	if err != nil {
		return nil, err
	}
	return checkedURLs(name, urls)
}

// PushTargets is PushURLs (urls, or pushErr) that also says, when no push
// URL can be named, whether the remote is configured at all: err is
// RemoteURL's error then (ErrNoRemote for a remote no scope configures).
// One git process answers both, where PushURLs and RemoteURL ran two.
func (t *Transport) PushTargets(ctx context.Context, name string) (urls []string, pushErr, err error) {
	urls, pushErr, err, asked := t.pushTargets(ctx, name)
	if asked {
		return urls, pushErr, err
	}
	if urls, pushErr = t.pushURLsGit(ctx, name); pushErr != nil {
		if _, err := t.RemoteURL(ctx, name); err != nil {
			return nil, pushErr, err
		}
		return nil, pushErr, nil
	}
	urls, pushErr = checkedURLs(name, urls)
	return urls, pushErr, nil
}

// pushTargets answers PushTargets from one `git config` (asked), or
// leaves it to git (not asked).
func (t *Transport) pushTargets(ctx context.Context, name string) (urls []string, pushErr, err error, asked bool) {
	if err := CheckRemoteName(name); err != nil {
		return nil, err, err, true
	}
	switch r, answer := t.remoteURLsOnce(ctx, name); answer {
	case urlsKnown:
		if !r.inRepo { // what get-url's exit 2 said; RemoteURL finds the url
			return nil, fmt.Errorf("remote %s: %w", name, ErrNoRemote), nil, true
		}
		urls, pushErr := checkedURLs(name, r.pushTo())
		return urls, pushErr, nil, true
	case urlsNone:
		err := fmt.Errorf("remote %s: %w", name, ErrNoRemote)
		return nil, err, err, true
	}
	return nil, nil, nil, false
}

// pushURLsGit asks `git remote get-url --push --all`.
func (t *Transport) pushURLsGit(ctx context.Context, name string) ([]string, error) {
	out, err := t.run(ctx, false, "remote", "get-url", "--push", "--all", "--", name)
	if exitCode(err) == 2 {
		return nil, fmt.Errorf("remote %s: %w", name, ErrNoRemote)
	}
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", name, err)
	}
	var urls []string
	for _, l := range strings.Split(string(out), "\n") {
		if l != "" {
			urls = append(urls, l)
		}
	}
	if len(urls) == 0 {
		return nil, fmt.Errorf("remote %s: %w: it has no URL", name, ErrNoRemote)
	}
	return urls, nil
}

// bigObjects makes git stream an object over 16 MiB while it receives a
// pack (index-pack, unpack-objects), instead of holding it whole in memory:
// a remote's pack of a few megabytes can hold a blob of gigabytes of
// zeros. Only fetches set it: for gc and push it would also stop deltas
// between large snapshots. A delta whose result is huge is still resolved
// in memory by git; what readproof then reads is bounded (BlobAtMost).
const bigObjects = "core.bigFileThreshold=16m"

// localUploadPack returns the --upload-pack option of a fetch from a
// repository on this machine, whose upload-pack (and the pack-objects it
// starts) git runs as a child of this process: they are given bigObjects
// too (git does not pass its -c settings to another repository's
// processes), so a huge object of the source is streamed on that side as
// well. nil for any other remote, whose server answers for its own memory.
func (t *Transport) localUploadPack(ctx context.Context, remote string) []string {
	url := remote
	if CheckRemoteName(remote) == nil {
		u, err := t.RemoteFetchURL(ctx, remote)
		if err != nil {
			return nil
		}
		url = u
	}
	if _, ok := localRepoPath(url); !ok {
		return nil
	}
	// run by git through sh, which may be a POSIX sh without $'...'
	return []string{"--upload-pack=" + text.SingleQuoted(t.git) + " -c " + bigObjects + " upload-pack"}
}
