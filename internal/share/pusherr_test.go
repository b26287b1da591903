package share

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
)

func writeHook(t *testing.T, dir, name, body string) {
	t.Helper()
	path := filepath.Join(dir, "hooks", name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestPushFailuresToldApart (issue 13.6): a hook's refusal, a per-ref
// update hook, a lock left on the remote and an unreachable server each get
// their own error and hint, with the server's own lines; only a remote that
// moved says "pull first".
func TestPushFailuresToldApart(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	d := startDaemon(t, base)
	ctx := context.Background()
	// Every case starts from the same project and server, built once here
	// and copied (setup) under the case's name.
	tmplDir := bareServer(t, base, "template.git")
	tmpl := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, tmpl, "origin", d.url("template.git"))
	tmpl.run(t, "r1", "a")
	mustPush(t, tmpl, "origin")
	for i := 0; i < 7; i++ { // more refs than the old message kept
		tmpl.tag(t, "a", fmt.Sprintf("t%d", i))
	}
	tmpl.run(t, "r2", "a")
	setup := func(t *testing.T, name string) (*project, string) {
		dir := filepath.Join(base, name)
		if err := testproc.CopyTree(tmplDir, dir); err != nil {
			t.Fatal(err)
		}
		return tmpl.copyProject(t, d.url("template.git"), d.url(name)), dir
	}
	noPullHint := func(t *testing.T, err error) {
		t.Helper()
		if strings.Contains(hint.Of(err), "readproof pull") || strings.Contains(hint.Of(err), "pull first") {
			t.Errorf("hint %q tells to pull", hint.Of(err))
		}
	}

	t.Run("pre-receive", func(t *testing.T) {
		p, dir := setup(t, "pre.git")
		writeHook(t, dir, "pre-receive", "echo 'FATAL: W any runs carol DENIED by fallthru' >&2\necho 'second line of the reason' >&2\nexit 1\n")
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrDenied) {
			t.Fatalf("push: %v, want ErrDenied", err)
		}
		for _, want := range []string{"remote: FATAL: W any runs carol DENIED by fallthru", "remote: second line of the reason", "pre-receive hook declined"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		noPullHint(t, err)
	})
	t.Run("pre-receive-http", func(t *testing.T) {
		p, dir := setup(t, "prehttp.git")
		h := startHTTP(t, base)
		git(t, p.path(), "remote", "set-url", "origin", h+"/prehttp.git")
		writeHook(t, dir, "pre-receive", "echo 'runs are read-only for you' >&2\nexit 1\n")
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "remote: runs are read-only for you") {
			t.Fatalf("push over http: %v, want ErrDenied with the hook's line", err)
		}
		noPullHint(t, err)
	})
	t.Run("update", func(t *testing.T) {
		p, dir := setup(t, "upd.git")
		writeHook(t, dir, "update", "case \"$1\" in refs/heads/main) echo \"main is protected here\" >&2; exit 1;; esac\nexit 0\n")
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrDenied) {
			t.Fatalf("push: %v, want ErrDenied", err)
		}
		for _, want := range []string{"remote: main is protected here", "refs/heads/main [remote rejected] (hook declined)"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error lacks %q:\n%v", want, err)
			}
		}
		noPullHint(t, err)
	})
	t.Run("lock", func(t *testing.T) {
		p, dir := setup(t, "lock.git")
		lock := filepath.Join(dir, "refs", "heads", "main.lock")
		writeFile(t, lock, "")
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrRemoteLocked) || !strings.Contains(hint.Of(err), "administrator") {
			t.Fatalf("push over git daemon with a lock left: %v (hint %q), want ErrRemoteLocked", err, hint.Of(err))
		}
		noPullHint(t, err)
		// The same remote by path: a stale lock is broken, a young one named.
		addRemote(t, p, "bypath", dir)
		_, err = Push(ctx, p.s, "bypath", Options{StaleLockAge: time.Hour})
		if !errors.Is(err, ErrRemoteLocked) || !strings.Contains(hint.Of(err), "refs/heads/main.lock") {
			t.Fatalf("push by path with a young lock: %v (hint %q)", err, hint.Of(err))
		}
		old := time.Now().Add(-time.Minute)
		os.Chtimes(lock, old, old)
		mustPush(t, p, "bypath")
		if _, err := os.Stat(lock); err == nil {
			t.Fatal("the stale lock is still there")
		}
		if got := git(t, dir, "rev-parse", store.RunsPrefix+"r2"); got == "" {
			t.Fatal("r2 not pushed")
		}
	})
	// A remote that cannot move the pushed objects out of its quarantine
	// (what a git gc pruning the remote's empty fan-out directories at
	// that moment does, or a full disk): "unable to migrate objects to
	// permanent storage". Here a pre-receive hook puts a file where each
	// missing fan-out directory goes: at every push, or at the first only.
	block := `for x in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do for y in 0 1 2 3 4 5 6 7 8 9 a b c d e f; do
  [ -e "$GIT_DIR/objects/$x$y" ] || : >"$GIT_DIR/objects/$x$y"; done; done
`
	t.Run("storage", func(t *testing.T) {
		p, dir := setup(t, "storage.git")
		writeHook(t, dir, "pre-receive", block)
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrRemoteStorage) || !strings.Contains(err.Error(), "unable to migrate objects to permanent storage") ||
			!strings.Contains(hint.Of(err), "push again") || strings.Contains(hint.Of(err), "will not help") {
			t.Fatalf("push to a remote that cannot store the objects: %v (hint %q), want ErrRemoteStorage and a hint to push again", err, hint.Of(err))
		}
		noPullHint(t, err)
	})
	t.Run("storage-once", func(t *testing.T) {
		p, dir := setup(t, "storage1.git")
		writeHook(t, dir, "pre-receive", `if [ -e "$GIT_DIR/blocked" ]; then
  find "$GIT_DIR/objects" -maxdepth 1 -type f -name '??' -exec rm {} +
  exit 0
fi
: >"$GIT_DIR/blocked"
`+block)
		mustPush(t, p, "origin")
		if _, err := os.Stat(filepath.Join(dir, "blocked")); err != nil {
			t.Fatalf("the hook never blocked the push (%v): the test proves nothing", err)
		}
		if got := git(t, dir, "rev-parse", store.RunsPrefix+"r2"); got == "" {
			t.Fatal("r2 not pushed")
		}
	})
	t.Run("unreachable", func(t *testing.T) {
		p, _ := setup(t, "gone.git")
		git(t, p.path(), "remote", "set-url", "origin", fmt.Sprintf("git://127.0.0.1:%d/gone.git", freePort(t)))
		_, err := Push(ctx, p.s, "origin", Options{})
		// connect fails first (ls-remote); a push whose connection dies is
		// the transport case of classifyPush.
		if err == nil || strings.Contains(hint.Of(err), "pull first") {
			t.Fatalf("push to a closed port: %v (hint %q)", err, hint.Of(err))
		}
	})
	t.Run("moved", func(t *testing.T) {
		p, _ := setup(t, "moved.git")
		q := newProject(t, map[string]string{"a": "other\n"})
		addRemote(t, q, "origin", d.url("moved.git"))
		mustPull(t, q, "origin")
		q.run(t, "q1", "a")
		mustPush(t, q, "origin")
		_, err := Push(ctx, p.s, "origin", Options{})
		if !errors.Is(err, ErrRejected) || !strings.Contains(hint.Of(err), "pull first") {
			t.Fatalf("push behind the remote: %v (hint %q)", err, hint.Of(err))
		}
	})
}

// TestClassifyTransport: a push whose connection fails is a transport
// failure, not a refusal.
func TestClassifyTransport(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	bareServer(t, d.base, "x.git")
	p := newProject(t, map[string]string{"a": "alpha\n"})
	p.run(t, "r1", "a")
	tr, err := Options{}.transport(p.s.Git())
	if err != nil {
		t.Fatal(err)
	}
	u := d.url("x.git")
	d.kill()
	err = pushBatch(context.Background(), tr, "origin", u, []string{"refs/heads/main:refs/heads/main"}, Options{})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("push to a dead daemon: %v, want ErrUnreachable", err)
	}
}

// TestClassifyRaceLost: a push that loses a race on the server (the ref
// moved between the advertisement and the update) is told to pull first,
// not that a lock file was left (git says "cannot lock ref ... but
// expected" for both; seen in testdata/script/team.txtar).
func TestClassifyRaceLost(t *testing.T) {
	err := &gitstore.PushError{
		Statuses: []gitstore.PushStatus{
			{Flag: '!', From: "refs/heads/main", To: "refs/heads/main", Summary: "[remote rejected] (atomic transaction failed)"},
			{Flag: '!', From: "refs/tags/readproof/runs/b-2", To: "refs/tags/readproof/runs/b-2", Summary: "[remote rejected] (atomic transaction failed)"},
		},
		Remote: []string{"error: cannot lock ref 'refs/heads/main': is at efcd51ee803b4562d3cd8216399c581e6d5a5877 but expected 322583c587e8c466c9b7ab0f4059a0e48cb667cc"},
	}
	if kind, _, _ := classifyPush(err); kind != failMoved {
		t.Fatalf("a push that lost the race on the server: kind %d, want failMoved", kind)
	}
}

// TestPushSweepsKilledQuarantine: a receive-pack killed mid-push leaves its
// quarantine directory on a remote on this machine; the next successful
// push removes it once nothing in it changed for the stale-lock age, says
// so, and leaves a quarantine that is still being written alone.
func TestPushSweepsKilledQuarantine(t *testing.T) {
	t.Parallel()
	remote := bareServer(t, t.TempDir(), "shared.git")
	old := time.Now().Add(-time.Hour)
	plant := func(name string, stale bool) string {
		q := filepath.Join(remote, "objects", name)
		f := filepath.Join(q, "pack", "tmp_pack_x")
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, []byte("half a pack"), 0o644); err != nil {
			t.Fatal(err)
		}
		if stale {
			for _, p := range []string{f, filepath.Dir(f), q} {
				if err := os.Chtimes(p, old, old); err != nil {
					t.Fatal(err)
				}
			}
		}
		return q
	}
	killed := plant("tmp_objdir-incoming-killed", true)
	live := plant("tmp_objdir-incoming-live", false)
	p := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, p, "origin", remote)
	p.run(t, "r1", "a")
	var said bytes.Buffer
	if _, err := Push(context.Background(), p.s, "origin", Options{Notice: &said}); err != nil {
		t.Fatal(err)
	}
	if pathExists(killed) {
		t.Error("the killed push's quarantine survived the next successful push")
	}
	if !pathExists(live) {
		t.Error("a quarantine still being written was removed")
	}
	if !strings.Contains(said.String(), "objects/tmp_objdir-incoming-killed") {
		t.Errorf("the removal was not reported: %q", said.String())
	}
}

func pathExists(p string) bool { _, err := os.Stat(p); return err == nil }

// TestNoticeEscapes: a notice names files read from the remote's
// directories (lock files, quarantines), whose names the remote chose: the
// bytes a terminal acts on reach it escaped, one line still ends in one
// newline.
func TestNoticeEscapes(t *testing.T) {
	var b strings.Builder
	Options{Notice: &b}.notice("readproof: warning: removed stale lock files on %s: %s\n", "origin", "refs/x\x1b]0;pwned\a\u202e.lock")
	want := `readproof: warning: removed stale lock files on origin: refs/x\x1b]0;pwned\a\u202e.lock` + "\n"
	if b.String() != want {
		t.Errorf("notice wrote %q, want %q", b.String(), want)
	}
}

// TestClassifyPackObjectsKilled: git prints "pack-objects died of signal
// N" only when pack-objects was killed (the kernel's OOM killer, a signal
// sent to the process group), never when it stopped on an object it could
// not read (that is its "fatal: unable to read", a plain exit). Such a push
// is not a damaged store: the user is told to push again, not to restore
// objects from a backup.
func TestClassifyPackObjectsKilled(t *testing.T) {
	t.Parallel()
	killed := &gitstore.GitError{Args: []string{"push"}, ExitCode: 1, Err: errors.New("exit status 1"),
		Stderr: "error: pack-objects died of signal 9\nerror: failed to push some refs to 'git://127.0.0.1:9418/x.git'\n"}
	kind, refs, remote := classifyPush(killed)
	if kind == failLocalObjects {
		t.Fatalf("pack-objects killed by a signal: classified as a damaged store (%v)", refs)
	}
	err := pushError("origin", killed, kind, refs, remote, nil)
	if h := hint.Of(err); strings.Contains(h, "damaged") || !strings.Contains(h, "push again") {
		t.Errorf("pack-objects killed by a signal: %v (hint %q); want the push tried again, no damage", err, h)
	}
	damaged := &gitstore.GitError{Args: []string{"push"}, ExitCode: 1, Err: errors.New("exit status 1"),
		Stderr: "fatal: unable to read 5626abf0f72e58d7a153368ba57db4c673c0e171\nerror: remote unpack failed: unpack-objects abnormal exit\n"}
	if kind, _, _ := classifyPush(damaged); kind != failLocalObjects {
		t.Errorf("git's own \"fatal: unable to read\": kind %d, want failLocalObjects", kind)
	}
}

// TestPushWarnsPushURLPassword: a push URL (remote.NAME.pushurl) with a
// password beside a URL readproof reads from the store's config itself is
// asked for only when the push sends; it is warned about there, redacted,
// as the URL is on every push and pull.
func TestPushWarnsPushURLPassword(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	bareServer(t, d.base, "x.git")
	p := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, p, "origin", d.url("x.git"))
	p.run(t, "r1", "a")
	git(t, p.path(), "config", "remote.origin.pushurl", "http://bob:pushPW@127.0.0.1:1/x.git")
	var notes strings.Builder
	_, err := Push(context.Background(), p.s, "origin", Options{Notice: &notes})
	if err == nil {
		t.Fatal("push to a closed port: no error")
	}
	if !strings.Contains(notes.String(), "warning: the URL of remote origin holds a password (http://[REDACTED]@127.0.0.1:1/x.git): git pushes to it") {
		t.Errorf("push through a push URL with a password: no warning; notices:\n%s", notes.String())
	}
	if strings.Contains(notes.String()+err.Error()+hint.Of(err), "pushPW") {
		t.Errorf("the password is shown: %s\n%v", notes.String(), err)
	}
}

// TestClassifyRemoteDiskFull (session 22): a remote whose disk is full
// rejects every ref with "unpacker error" and says "No space left on
// device". Before, that read as a refusal: "pulling will not help: the
// server's reason is above (permissions, a hook or a protected ref)". It is
// the remote's storage, and the hint says to free space there; no retry (a
// full disk stays full a moment later).
func TestClassifyRemoteDiskFull(t *testing.T) {
	err := &gitstore.PushError{
		Statuses: []gitstore.PushStatus{
			{Flag: '!', From: "refs/heads/main", To: "refs/heads/main", Summary: "[remote rejected] (unpacker error)"},
			{Flag: '!', From: "refs/tags/readproof/runs/rbig", To: "refs/tags/readproof/runs/rbig", Summary: "[remote rejected] (unpacker error)"},
		},
		Remote: []string{"fatal: unable to write loose object file: No space left on device"},
	}
	kind, refs, said := classifyPush(err)
	got := pushError("origin", err, kind, refs, said, nil)
	if !errors.Is(got, ErrRemoteStorage) || !strings.Contains(got.Error(), "No space left on device") ||
		!strings.Contains(hint.Of(got), "disk") || !strings.Contains(hint.Of(got), "free space") || strings.Contains(hint.Of(got), "will not help") {
		t.Fatalf("push to a full remote: %v\nhint: %s\nwant ErrRemoteStorage and a hint to free space on the remote", got, hint.Of(got))
	}
}

// TestTransportHintDubiousOwnership (session 22): a remote repository on
// this machine that another user owns is refused by git ("detected dubious
// ownership"); the hint said to check the URL and that git can reach it,
// which it can. It now names the cause and the two ways out.
func TestTransportHintDubiousOwnership(t *testing.T) {
	err := fmt.Errorf("list refs of origin: %w", &gitstore.GitError{Args: []string{"ls-remote", "--symref", "--", "origin"}, ExitCode: 128,
		Stderr: "fatal: detected dubious ownership in repository at '/srv/remote'; git config --global --add safe.directory /srv/remote; fatal: Could not read from remote repository.; Please make sure you have the correct access rights; and the repository exists."})
	got := transportHint(err, "check the URL and that git can reach it: git ls-remote /srv/remote")
	if !strings.Contains(got, "another user") || !strings.Contains(got, "git config --global --add safe.directory /srv/remote`") || strings.Contains(got, "check the URL") {
		t.Fatalf("hint of a remote another user owns: %q", got)
	}
}

// TestUnpackerErrorWithoutReason (session 22): a remote whose unpacker dies
// without a word (a remote on this machine under this shell's `ulimit -f`:
// index-pack killed by SIGXFSZ) rejects every ref with "unpacker error" and
// no server line. The hint said "the server's reason is above (permissions,
// a hook or a protected ref)": there was none, and no hook or rule refused
// anything. It now says the remote could not store the objects and where to
// look.
func TestUnpackerErrorWithoutReason(t *testing.T) {
	err := &gitstore.PushError{
		Statuses: []gitstore.PushStatus{
			{Flag: '!', From: "refs/heads/main", To: "refs/heads/main", Summary: "[remote rejected] (unpacker error)"},
			{Flag: '!', From: "refs/tags/readproof/runs/rbig", To: "refs/tags/readproof/runs/rbig", Summary: "[remote rejected] (unpacker error)"},
		},
	}
	kind, refs, said := classifyPush(err)
	got := pushError("t", err, kind, refs, said, nil)
	h := hint.Of(got)
	if strings.Contains(h, "reason is above") || !strings.Contains(h, "ulimit -f") || !strings.Contains(h, "nothing was changed on the remote") {
		t.Fatalf("push whose remote's unpacker died without a word: %v\nhint: %s", got, h)
	}
}
