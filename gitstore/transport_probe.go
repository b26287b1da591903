package gitstore

// Questions asked of a remote before anything is fetched from it or pushed
// to it (package share recognises a readproof store by them).

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// RemoteHead returns the ref the remote's HEAD names (for example
// "refs/heads/main"), or "" when the remote has no HEAD or a detached one.
// A remote on this machine is read in place as LsRemoteHead reads it.
func (t *Transport) RemoteHead(ctx context.Context, remote string) (string, error) {
	if t.listAt.name == remote && remote != "" {
		_, head, ok, err := listLocal(t.listAt.url)
		if err != nil {
			return "", err
		}
		if ok {
			return head, nil
		}
	}
	out, err := t.run(ctx, false, "ls-remote", "--symref", "--", remote, "HEAD")
	if err != nil {
		return "", fmt.Errorf("ask %s for its HEAD: %w", RedactURL(remote), err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if rest, ok := strings.CutPrefix(line, "ref: "); ok {
			target, name, _ := strings.Cut(rest, "\t")
			if name == "HEAD" && CheckRefName(target) == nil {
				return target, nil
			}
		}
	}
	return "", nil
}

// ProbeCommit fetches the one commit that ref names on remote (a configured
// remote name or a URL) into a temporary repository, with depth 1, and
// returns its raw text (headers, a blank line, the message). Nothing is
// written to this repository: a remote that turns out not to be a readproof
// store leaves no object behind.
func (t *Transport) ProbeCommit(ctx context.Context, remote, ref string) ([]byte, error) {
	if CheckRefName(ref) != nil {
		return nil, fmt.Errorf("probe %s: %q is not a ref name", RedactURL(remote), ref)
	}
	out, err := t.run(ctx, false, "ls-remote", "--get-url", "--", remote)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(remote), err)
	}
	return t.ProbeCommitAt(ctx, strings.TrimRight(string(out), "\n"), ref)
}

// probeScratch makes ProbeCommitAt's scratch repository directory: in the
// store when the transport's directory is one (swept there after a kill:
// makeScratch), else, or when the store cannot be written (a push from a
// store this user only reads), in $TMPDIR.
func (t *Transport) probeScratch() (dir string, cleanup func(), err error) {
	if fi, err := os.Stat(filepath.Join(t.dir, "objects")); t.dir != "" && err == nil && fi.IsDir() {
		if abs, err := filepath.Abs(t.dir); err == nil {
			if dir, cleanup, err := makeScratch(abs, probePrefix); err == nil {
				return dir, cleanup, nil
			}
		}
	}
	if dir, err = os.MkdirTemp("", probePrefix); err != nil {
		return "", nil, err
	}
	return dir, func() { os.RemoveAll(dir) }, nil
}

// ProbeCommitAt is ProbeCommit of a URL git already resolved (RemoteFetchURL,
// or `git ls-remote --get-url`): the remote's name is not looked up again,
// nor is the URL rewritten again (runAt).
func (t *Transport) ProbeCommitAt(ctx context.Context, url, ref string) ([]byte, error) {
	if CheckRefName(ref) != nil {
		return nil, fmt.Errorf("probe %s: %q is not a ref name", RedactURL(url), ref)
	}
	if dir, ok := localRepoPath(url); ok {
		// A repository on this machine is read in place: its ref and
		// object are read here (readLocalCommit), or by one git process
		// when that cannot (a symbolic ref, a tag to peel), instead of a
		// scratch repository and a shallow fetch (whose server side walks
		// the history). Anything unexpected takes the fetch path below.
		if raw, ok, err := readLocalCommit(dir, ref); ok || err != nil {
			return raw, err // the error names the object: not the probe's fault
		}
		l := &Transport{dir: dir, git: t.git, opts: TransportOptions{Interactive: t.opts.Interactive}}
		if raw, err := l.run(ctx, false, "cat-file", "commit", ref); err == nil {
			return raw, nil
		}
	}
	tmp, cleanup, err := t.probeScratch()
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(url), err)
	}
	defer cleanup()
	// The scratch repository is laid out here (what `git init --bare`
	// makes and fetch needs: HEAD, objects/, refs/), not by a git process.
	for _, d := range []string{"objects", "refs"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o700); err != nil {
			return nil, fmt.Errorf("probe %s: %w", RedactURL(url), err)
		}
	}
	if err := os.WriteFile(filepath.Join(tmp, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600); err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(url), err)
	}
	p := &Transport{dir: tmp, git: t.git, opts: TransportOptions{Interactive: t.opts.Interactive}, urlsFrom: t}
	if err := boundedFetch(ctx, tmp, t.shownRemote(url), t.maxFetch(), func(ctx context.Context) error {
		_, err := p.runAt(ctx, false, nil, url, "-c", "core.bare=true", "-c", bigObjects, "-c", fetchUnpackLimit, "-c", transferUnpackLimit, "fetch", "--quiet", "--no-tags", "--depth=1", "--no-write-fetch-head", "--no-auto-gc",
			"--", url, "+"+ref+":refs/probe")
		return err
	}); err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(url), err)
	}
	if raw, ok, err := readLocalCommit(tmp, "refs/probe"); ok || err != nil {
		return raw, err
	}
	raw, err := p.run(ctx, false, "cat-file", "commit", "refs/probe")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(url), err)
	}
	return raw, nil
}

// ErrNotCommit: a ref a probe reads names a blob or a tree, where a commit
// (or a tag of one) belongs.
var ErrNotCommit = errors.New("not a commit")

// MaxProbeCommitBytes is the largest object a probe reads as a commit: the
// bound readproof sets on a manifest.json (manifest.MaxBytes, which this
// package does not import), more than any commit it writes. A larger object
// is refused from its header, unread.
const MaxProbeCommitBytes = 64 << 20

// readLocalCommit reads the commit a branch or tag of the repository at
// gitDir names, as `git cat-file commit REF` prints it, without a git
// process: the loose ref, else its packed-refs line; the object, checked
// against its id. It reports false for anything else (a symbolic ref, an
// annotated tag, a read error): the caller asks git then. An object over
// MaxProbeCommitBytes (its size read from its header, not inflated), a blob
// or a tree is an error wrapping ErrTooLarge or ErrNotCommit: git would
// read a blob of gigabytes whole, then say only "bad file".
// Nothing is written to the repository.
func readLocalCommit(gitDir, ref string) ([]byte, bool, error) {
	var id OID
	if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(ref))); err == nil {
		id = OID(strings.TrimRight(string(b), "\n"))
	} else if errors.Is(err, fs.ErrNotExist) {
		b, err := os.ReadFile(filepath.Join(gitDir, "packed-refs"))
		if err != nil {
			return nil, false, nil
		}
		p, err := parsePackedRefs(b)
		if err != nil {
			return nil, false, nil
		}
		found, ok, err := p.find(ref)
		if err != nil || !ok {
			return nil, false, nil
		}
		id = found
	} else {
		return nil, false, nil
	}
	h, err := parseOID(id)
	if err != nil {
		return nil, false, nil
	}
	d := newODB(filepath.Join(gitDir, "objects"))
	defer d.Close()
	if n, err := d.size(h); err == nil && n > MaxProbeCommitBytes {
		return nil, false, tooLarge(id, n, MaxProbeCommitBytes)
	}
	typ, data, err := d.read(h)
	if err != nil || objectHash(typ, data) != h {
		return nil, false, nil
	}
	switch typ {
	case plumbing.CommitObject:
		return data, true, nil
	case plumbing.BlobObject, plumbing.TreeObject:
		return nil, false, fmt.Errorf("%s is a %s: %w", id, typ, ErrNotCommit)
	}
	return nil, false, nil
}

// InitBare creates a bare repository at the transport's directory with HEAD
// on refs/heads/main (when create is set; otherwise the repository must
// exist) and sets each key/value pair in its configuration.
//
// In a repository it has just created, the keys are appended to the config
// file in one locked write (appendConfigOf, which reads the file under its
// lock for newSectionsText) in the bytes one `git config KEY
// VALUE` per pair writes there (newSectionsText), instead of one git process
// per key; an existing repository, a key with a subsection and a GIT_CONFIG
// that redirects `git config` go through git.
func (t *Transport) InitBare(ctx context.Context, create bool, config [][2]string) error {
	if create {
		if _, err := t.run(ctx, false, "init", "--quiet", "--bare", "--initial-branch=main"); err != nil {
			return fmt.Errorf("create a bare repository: %w", err)
		}
	}
	t.forgetURLs()
	if create && !gitConfigRedirected() {
		appended, err := t.appendConfigOf(func(old []byte) (string, bool) { return newSectionsText(old, config) })
		if err != nil {
			return fmt.Errorf("set %s: %w", config[0][0], err)
		}
		if appended {
			return nil
		}
	}
	for _, kv := range config {
		if _, err := t.run(ctx, false, "config", "--", kv[0], kv[1]); err != nil {
			return fmt.Errorf("set %s: %w", kv[0], err)
		}
	}
	return nil
}

// PushError is a push the remote refused (errors.Is ErrRejected): git's
// per-ref verdicts and every message the server sent.
type PushError struct {
	msg      string
	Statuses []PushStatus
	// Remote holds the server's "remote: " lines (see GitError.Remote).
	Remote []string
	err    error
}

func newPushError(msg string, statuses []PushStatus, err error) *PushError {
	e := &PushError{msg: msg, Statuses: statuses, err: err}
	var ge *GitError
	if errors.As(err, &ge) {
		e.Remote = ge.Remote
	}
	return e
}

func (e *PushError) Error() string { return e.msg }

// Unwrap matches ErrRejected and the failed git command.
func (e *PushError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrRejected}
	}
	return []error{ErrRejected, e.err}
}

// isAtomicFollower reports whether a rejected ref's summary only says that
// another ref of the atomic push failed: the client spells it "atomic push
// failed", the server "atomic push failure"; neither is the cause.
func isAtomicFollower(summary string) bool {
	return strings.Contains(summary, "atomic push failed") || strings.Contains(summary, "atomic push failure")
}

// remoteLines returns the server's messages in git's stderr: the text of
// each "remote: " line, without progress meters and empty lines.
func remoteLines(stderr string) []string {
	var out []string
	for _, l := range strings.Split(strings.ReplaceAll(stderr, "\r", "\n"), "\n") {
		rest, ok := strings.CutPrefix(l, "remote:")
		if !ok {
			continue
		}
		rest = strings.TrimSpace(strings.ReplaceAll(rest, "\x1b[K", ""))
		if rest == "" || progressLine(rest) {
			continue
		}
		out = append(out, rest)
	}
	return out
}

func progressLine(s string) bool {
	for _, p := range []string{"Counting objects", "Compressing objects", "Enumerating objects", "Total ", "Resolving deltas", "Writing objects"} {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

// localRepoPath returns the git directory a remote URL names when it is a
// repository on this machine (an absolute path or a file:// URL to a bare
// repository), as git's local transport would read it.
func localRepoPath(url string) (string, bool) {
	p := url
	if rest, ok := strings.CutPrefix(url, "file://"); ok {
		p = rest
	} else if strings.Contains(url, "://") {
		return "", false
	}
	if !filepath.IsAbs(p) {
		return "", false
	}
	if fi, err := os.Stat(filepath.Join(p, "objects")); err != nil || !fi.IsDir() {
		return "", false // not a bare repository (or not there): fetch decides
	}
	return filepath.Clean(p), true
}

// newSectionsText is what `git config KEY VALUE`, run once per pair in
// order, appends to existing, a config file that has none of the pairs'
// sections: a section header (spelled as the section's first key spells
// it) where the section changes, then "\tname = value" lines
// (writeConfigPair). ok is false when a key is not "section.name" with
// plain letters, digits and '-' (git's rules for both), when existing has a
// header of one of the sections or a section comes back after another (git
// adds to the section already there), or when there is nothing to write.
func newSectionsText(existing []byte, config [][2]string) (text string, ok bool) {
	present := map[string]bool{}
	for _, line := range strings.Split(string(existing), "\n") {
		if line = strings.TrimLeft(line, " \t"); strings.HasPrefix(line, "[") {
			name, _, _ := strings.Cut(line[1:], "]")
			name, _, _ = strings.Cut(name, " ")
			name, _, _ = strings.Cut(name, ".")
			present[strings.ToLower(name)] = true
		}
	}
	var b strings.Builder
	current := ""
	for _, kv := range config {
		section, name, found := strings.Cut(kv[0], ".")
		if !found || !simpleConfigName(section) || !simpleConfigName(name) || !isLetter(name[0]) {
			return "", false
		}
		if lower := strings.ToLower(section); lower != current {
			if present[lower] {
				return "", false
			}
			present[lower] = true
			current = lower
			b.WriteString("[" + section + "]\n")
		}
		writeConfigPair(&b, name, kv[1])
	}
	return b.String(), b.Len() > 0
}

// simpleConfigName reports whether s is a non-empty run of ASCII letters,
// digits and '-': a section or variable name git accepts as written.
func simpleConfigName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !isLetter(c) && !(c >= '0' && c <= '9') && c != '-' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
