package gitstore

// Questions asked of a remote before anything is fetched from it or pushed
// to it (package share recognises a readproof store by them).

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// RemoteHead returns the ref the remote's HEAD names (for example
// "refs/heads/main"), or "" when the remote has no HEAD or a detached one.
func (t *Transport) RemoteHead(ctx context.Context, remote string) (string, error) {
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
	url := strings.TrimRight(string(out), "\n")
	if dir, ok := localRepoPath(url); ok {
		// A repository on this machine is read in place: one git process
		// instead of a scratch repository and a shallow fetch (whose
		// server side walks the history). Anything unexpected takes the
		// fetch path below.
		l := &Transport{dir: dir, git: t.git, opts: TransportOptions{Interactive: t.opts.Interactive}}
		if raw, err := l.run(ctx, false, "cat-file", "commit", ref); err == nil {
			return raw, nil
		}
	}
	tmp, err := os.MkdirTemp("", "readproof-probe-")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(remote), err)
	}
	defer os.RemoveAll(tmp)
	p := &Transport{dir: tmp, git: t.git, opts: TransportOptions{Interactive: t.opts.Interactive}}
	if _, err := p.run(ctx, false, "init", "--quiet", "--bare"); err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(remote), err)
	}
	if _, err := p.run(ctx, false, "fetch", "--quiet", "--no-tags", "--depth=1", "--no-write-fetch-head", "--no-auto-gc",
		"--", url, "+"+ref+":refs/probe"); err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(remote), err)
	}
	raw, err := p.run(ctx, false, "cat-file", "commit", "refs/probe")
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", RedactURL(remote), err)
	}
	return raw, nil
}

// InitBare creates a bare repository at the transport's directory with HEAD
// on refs/heads/main (when create is set; otherwise the repository must
// exist) and sets each key/value pair in its configuration.
func (t *Transport) InitBare(ctx context.Context, create bool, config [][2]string) error {
	if create {
		if _, err := t.run(ctx, false, "init", "--quiet", "--bare", "--initial-branch=main"); err != nil {
			return fmt.Errorf("create a bare repository: %w", err)
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
