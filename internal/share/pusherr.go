package share

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// Push failures, told apart so the hint helps (issue 13.6). Each is
// matched with errors.Is; ErrRejected alone means the remote moved.
var (
	// ErrDenied: the server refused the push (permissions, a pre-receive
	// or update hook, a host's branch protection). Pulling does not help;
	// the error carries every message the server sent.
	ErrDenied = errors.New("the remote refused the push")
	// ErrRemoteLocked: a lock file left on the remote (a push killed on
	// the server) blocks a ref.
	ErrRemoteLocked = errors.New("a ref is locked on the remote")
	// ErrRemoteStorage: the remote took the push but could not store its
	// objects ("unable to migrate objects to permanent storage", an
	// unpacker error): a git gc on the remote pruning at that moment, or
	// its disk. No ref moved there; pushing again may well succeed.
	ErrRemoteStorage = errors.New("the remote could not store the pushed objects")
	// ErrUnreachable: git could not talk to the remote (network, DNS, TLS,
	// a server that went away). Nothing changed on the remote.
	ErrUnreachable = errors.New("cannot reach the remote")
)

// pushFailure is the kind of a failed git push.
type pushFailure int

const (
	failMoved pushFailure = iota
	failDenied
	failLocked
	failStorage
	failTransport
	// failLocalObjects: this store lacks an object its refs name, so
	// git's pack-objects could not send it (the remote then reports an
	// unpacker error): the store is damaged, not the remote.
	failLocalObjects
	// failPackKilled: git's pack-objects here was killed by a signal (the
	// OOM killer, a signal to the process group) before it sent all.
	failPackKilled
	// failRemoteFull: the remote's disk or quota is full (its unpacker
	// error says "No space left on device"): no ref moved, and pushing
	// again at once fails the same way.
	failRemoteFull
)

// classifyPush sorts a failed push by git's per-ref verdicts and the
// server's messages.
func classifyPush(err error) (kind pushFailure, refs, remote []string) {
	var pe *gitstore.PushError
	var ge *gitstore.GitError
	var text []string
	if errors.As(err, &ge) {
		if line := localObjectFailure(ge.Stderr); line != "" {
			return failLocalObjects, []string{line}, nil
		}
		if line := packKilled(ge.Stderr); line != "" {
			return failPackKilled, []string{line}, nil
		}
	}
	if errors.As(err, &pe) {
		remote = pe.Remote
		client, server := false, false
		var followers []string // "atomic push failed/failure": not the cause, listed last
		for _, s := range pe.Statuses {
			if !s.Rejected() {
				continue
			}
			if item := fmt.Sprintf("%s %s", s.To, s.Summary); strings.Contains(s.Summary, "atomic push fail") {
				followers = append(followers, item)
			} else {
				refs = append(refs, item)
			}
			text = append(text, s.Summary)
			switch {
			case strings.Contains(s.Summary, "[remote rejected]"):
				if !strings.Contains(s.Summary, "atomic push fail") {
					server = true
				}
			case strings.Contains(s.Summary, "[rejected]"), strings.Contains(s.Summary, "stale info"):
				client = true
			}
		}
		refs = append(refs, followers...)
		text = append(text, remote...)
		switch {
		case movedMessage(strings.Join(remote, "\n")):
			// another push updated the ref between our look and our
			// update (a race lost on the server): the remote moved
			return failMoved, refs, remote
		case lockMessage(strings.Join(text, "\n")):
			return failLocked, refs, remote
		case fullMessage(strings.Join(text, "\n")):
			return failRemoteFull, refs, remote
		case storageMessage(strings.Join(text, "\n")):
			return failStorage, refs, remote
		case server:
			return failDenied, refs, remote
		case client:
			return failMoved, refs, remote
		}
		return failDenied, refs, remote
	}
	if errors.As(err, &ge) {
		remote = ge.Remote
		all := ge.Stderr + "\n" + strings.Join(remote, "\n")
		switch {
		case lockMessage(all):
			return failLocked, nil, remote
		case deniedMessage(all) || len(remote) > 0:
			return failDenied, nil, remote
		}
	}
	return failTransport, nil, remote
}

// localObjectFailure returns the line of git's own (not the server's)
// stderr that says this store could not read an object it was sending,
// or "".
func localObjectFailure(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimSpace(l)
		if strings.HasPrefix(l, "fatal: unable to read ") {
			return l
		}
	}
	return ""
}

// packKilled returns git's line saying its pack-objects died of a signal,
// or "". git says so only for a death by signal (send-pack.c): a
// pack-objects that stops on an object it cannot read exits, saying
// "fatal: unable to read" (localObjectFailure).
func packKilled(stderr string) string {
	for _, l := range strings.Split(stderr, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "error: pack-objects died of signal") {
			return l
		}
	}
	return ""
}

func lockMessage(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, ".lock': file exists") || strings.Contains(l, "cannot lock ref") ||
		strings.Contains(l, "failed to lock") || strings.Contains(l, "atomic transaction failed")
}

// storageMessage: receive-pack took the objects but could not store them
// (its quarantine could not be made or moved into the object directory):
// no ref moved, and the cause is the remote's disk or a git gc there
// pruning at that moment, not a refusal.
func storageMessage(s string) bool {
	return strings.Contains(s, "unable to migrate objects to permanent storage") ||
		strings.Contains(s, "unable to create temporary object directory")
}

// fullMessage: the remote could not write the objects for want of space
// (git's words for ENOSPC and EDQUOT, and pack-objects' own).
func fullMessage(s string) bool { return gitstore.OutOfSpace(errors.New(s)) }

// movedMessage: git's ref transaction found the ref at another commit than
// the push expected ("cannot lock ref 'R': is at X but expected Y").
func movedMessage(s string) bool { return strings.Contains(s, "but expected") }

func deniedMessage(s string) bool {
	l := strings.ToLower(s)
	for _, p := range []string{"permission denied", "denied", "not allowed", "forbidden", "403", "401",
		"authentication failed", "could not read username", "read-only", "unauthorized", "hook declined"} {
		if strings.Contains(l, p) {
			return true
		}
	}
	return false
}

// pushError turns a failed git push into the error the user sees: what
// happened, the server's own messages, and a hint that fits.
func pushError(remote string, err error, kind pushFailure, refs, said []string, locks []string) error {
	var msg strings.Builder
	for _, l := range said {
		msg.WriteString("; remote: " + l)
	}
	list := summarize(refs, 8)
	switch kind {
	case failMoved:
		return pullFirst(remote, err)
	case failDenied:
		e := fmt.Errorf("push %s: %w: %s%s", remote, ErrDenied, orText(list, "the server gave no ref verdicts"), msg.String())
		if damagedMessage(e.Error()) {
			// receive-pack cannot check the push's objects against refs
			// that name objects it lacks: not a permission or a hook
			return hint.With(e, damagedHint)
		}
		if strings.Contains(e.Error(), "(branch is currently checked out)") {
			// receive.denyCurrentBranch of a repository made without --bare
			return hint.With(e, "the remote is a repository with a work tree, whose checked-out branch git will not move: share runs through a bare repository (`readproof remote init PATH`, or `git init --bare -b main PATH`), then `readproof remote rm "+remote+"` and `readproof remote add "+remote+" PATH`; nothing was changed on the remote")
		}
		if len(said) == 0 && onlyUnpackerErrors(refs) {
			// receive-pack's unpacker died and said nothing: no hook or
			// rule refused the push, the remote could not store it
			return hint.With(e, "pulling will not help: the remote could not unpack the pushed objects and gave no reason: look at its disk (df), its permissions on objects/, or its file size limit (a remote on this machine runs under this shell's `ulimit -f`), then push again; nothing was changed on the remote")
		}
		return hint.With(e, "pulling will not help: the server's reason is above (permissions, a hook or a protected ref); nothing was changed on the remote")
	case failStorage:
		e := fmt.Errorf("push %s: %w: %s%s", remote, ErrRemoteStorage, orText(list, "the server gave no ref verdicts"), msg.String())
		return hint.With(e, "nothing was changed on the remote: a git gc running there at that moment can cause this, so push again; if it fails again, ask the server's administrator to check the remote's disk and git fsck it")
	case failRemoteFull:
		e := fmt.Errorf("push %s: %w: %s%s", remote, ErrRemoteStorage, orText(list, "the server gave no ref verdicts"), msg.String())
		return hint.With(e, "the remote's disk (or quota) is full: free space on the file system that holds the remote (or ask its administrator to), then push again; nothing was changed on the remote")
	case failLocalObjects:
		e := fmt.Errorf("push %s: this store cannot send objects its refs name (git: %s); nothing was sent", remote, strings.Join(refs, "; "))
		return hint.With(e, "this store is damaged, not the remote: `readproof verify` names the run, resource or tag that lacks the object; restore it from a backup or a copy that holds it (readproof pull from one), then push again; nothing was changed on the remote")
	case failPackKilled:
		e := fmt.Errorf("push %s: git stopped while it packed the objects to send (git: %s): %w", remote, strings.Join(refs, "; "), err)
		return hint.With(e, "nothing was changed on the remote (a push moves its refs all or none): push again; if the system killed git for want of memory (dmesg says so), free some first")
	case failLocked:
		e := fmt.Errorf("push %s: %w: %s%s", remote, ErrRemoteLocked, orText(list, "a ref lock"), msg.String())
		if len(locks) > 0 {
			return hint.With(e, "lock files younger than the stale-lock age are left on the remote ("+strings.Join(locks, ", ")+"); if no push is running, push again in a few seconds")
		}
		return hint.With(e, "a push killed on the server left a <ref>.lock file; ask the server's administrator to remove the lock files named above once no push is running, then push again")
	}
	return hint.With(fmt.Errorf("push %s: %w: %w", remote, ErrUnreachable, err), "nothing was lost: the remote keeps its old refs; check the network and the URL (`readproof remote list`), then push again")
}

// onlyUnpackerErrors reports whether every verdict of refs is git's
// "[remote rejected] (unpacker error)" (or the atomic push's followers).
func onlyUnpackerErrors(refs []string) bool {
	seen := false
	for _, r := range refs {
		switch {
		case strings.HasSuffix(r, "[remote rejected] (unpacker error)"):
			seen = true
		case strings.Contains(r, "atomic push fail"):
		default:
			return false
		}
	}
	return seen
}

func orText(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// localRepo returns the directory of a remote URL that names a bare
// repository on this machine (a path or file://), or "".
func localRepo(u string) string {
	p := u
	if strings.HasPrefix(u, "file://") {
		pu, err := url.Parse(u)
		if err != nil {
			return ""
		}
		p = pu.Path
	} else if strings.Contains(u, "://") || absLocal(u) != u || !filepath.IsAbs(u) {
		return ""
	}
	if fi, err := os.Stat(filepath.Join(p, "objects")); err != nil || !fi.IsDir() {
		return ""
	}
	return p
}

// breakRemoteLocks removes ref lock files older than age from the bare
// repository dir (loose ref locks under refs/, packed-refs.lock, HEAD.lock),
// as the local store does with its own stale locks. It returns the locks
// removed and those still too young.
func breakRemoteLocks(dir string, age time.Duration) (removed, young []string) {
	now := time.Now()
	consider := func(path string) {
		fi, err := os.Lstat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return
		}
		rel, _ := filepath.Rel(dir, path)
		if now.Sub(fi.ModTime()) < age {
			young = append(young, rel)
			return
		}
		if os.Remove(path) == nil {
			removed = append(removed, rel)
		}
	}
	filepath.WalkDir(filepath.Join(dir, "refs"), func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".lock") {
			consider(path)
		}
		return nil
	})
	consider(filepath.Join(dir, "packed-refs.lock"))
	consider(filepath.Join(dir, "HEAD.lock"))
	return removed, young
}

// sweepRemoteQuarantine removes, from the bare repository dir, the
// quarantine directories (objects/tmp_objdir-incoming-*) that a receive-pack
// killed mid-push left behind: git moves a push's objects into place from
// there only when the push succeeds, and never removes the directory of a
// killed one. A directory counts as left behind when nothing in it changed
// for age, since a push still receiving writes to its pack file there.
func sweepRemoteQuarantine(dir string, age time.Duration) (removed []string) {
	objects := filepath.Join(dir, "objects")
	entries, err := os.ReadDir(objects)
	if err != nil {
		return nil
	}
	now := time.Now()
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "tmp_objdir-incoming-") {
			continue
		}
		q := filepath.Join(objects, e.Name())
		fresh := false
		filepath.WalkDir(q, func(_ string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if fi, err := d.Info(); err == nil && now.Sub(fi.ModTime()) < age {
				fresh = true
				return filepath.SkipAll
			}
			return nil
		})
		if !fresh && os.RemoveAll(q) == nil {
			removed = append(removed, filepath.Join("objects", e.Name()))
		}
	}
	return removed
}

// pushBatch pushes one batch to u and classifies a failure. A ref lock left
// on a remote on this machine that is older than the stale-lock age is
// removed and the push tried once more.
func pushBatch(ctx context.Context, t *gitstore.Transport, remote, u string, batch []string, opts Options) error {
	age := opts.StaleLockAge
	if age <= 0 {
		age = gitstore.DefaultStaleLockAge
	}
	// pushed: what killed pushes left on a remote on this machine is
	// swept after any push that succeeds, a retry's too
	pushed := func() error {
		if dir := localRepo(u); dir != "" {
			if removed := sweepRemoteQuarantine(dir, age); len(removed) > 0 {
				opts.notice("readproof: warning: removed what killed pushes left on %s (unchanged for %s): %s\n", remote, age, strings.Join(removed, ", "))
			}
		}
		return nil
	}
	_, err := t.Push(ctx, u, batch)
	if err == nil {
		return pushed()
	}
	kind, refs, said := classifyPush(err)
	if kind == failStorage {
		// the remote could not store the objects and moved no ref: a gc
		// there pruning at that moment is gone by the next try
		opts.notice("readproof: warning: %s could not store the pushed objects (a git gc running there?): pushing again\n", remote)
		if _, err = t.Push(ctx, u, batch); err == nil {
			return pushed()
		}
		kind, refs, said = classifyPush(err)
	}
	var young []string
	if kind == failLocked {
		if dir := localRepo(u); dir != "" {
			var removed []string
			removed, young = breakRemoteLocks(dir, age)
			if len(removed) > 0 {
				opts.notice("readproof: warning: removed stale lock files on %s (older than %s): %s\n", remote, age, strings.Join(removed, ", "))
				if _, err = t.Push(ctx, u, batch); err == nil {
					return pushed()
				}
				kind, refs, said = classifyPush(err)
			}
		}
	}
	return pushError(remote, err, kind, refs, said, young)
}
