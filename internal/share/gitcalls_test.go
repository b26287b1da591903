package share

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// gitLog puts a git on PATH that logs each command readproof runs (its
// arguments on one line) before running the real git, and returns the
// function that reads and clears the log. git's own children find git in
// its exec path first, so only readproof's commands are logged.
func gitLog(t *testing.T) func() []string {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	log := filepath.Join(bin, "log")
	script := "#!/bin/sh\nprintf '%s\\n' \"$*\" >> '" + log + "'\nexec '" + real + "' \"$@\"\n"
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return func() []string {
		t.Helper()
		data, err := os.ReadFile(log)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Fatal(err)
		}
		os.Remove(log)
		var cmds []string
		for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
			if l != "" {
				// drop --git-dir=... and the -c options every command carries
				cmds = append(cmds, strings.TrimPrefix(l[strings.Index(l, "maintenance.auto=false")+len("maintenance.auto=false"):], " "))
			}
		}
		return cmds
	}
}

// TestGitProcessesUpToDate: a push or a pull with nothing to do runs one
// git process when the store's config file names the remote, where it ran
// two (push: three, with HEAD asked again) to resolve the remote's URLs
// first: the listing, or for a repository on this machine the `git config`
// that settles its URL, the listing then read in place (were the listing
// by git, a shell and upload-pack). Removing a remote runs one; a remote
// configured elsewhere (the environment) has its URL read by one git
// config (were three processes: remote get-url, config --get, ls-remote
// --get-url). A remote served by git (a daemon) is still listed by git.
func TestGitProcessesUpToDate(t *testing.T) {
	ctx := context.Background()
	srv := t.TempDir()
	dir := filepath.Join(srv, "r.git")
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=trunk", dir) // HEAD on a branch it lacks
	a := newProject(t, map[string]string{"a": "alpha\n"})
	a.run(t, "r1", "a")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")
	// b's journal root is a's only when both stores began in the same
	// second; otherwise the pull merged the two journals. Sent back and
	// taken by a, the merge leaves a, b and the remote on one main.
	mustPush(t, b, "origin")
	mustPull(t, a, "origin")

	d := startDaemon(t, srv)
	addRemote(t, a, "served", d.url("r.git"))
	addRemote(t, b, "served", d.url("r.git"))

	logged := gitLog(t)
	pr := mustPush(t, a, "origin")
	if cmds := logged(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "config --show-scope --null --get-regexp") {
		t.Fatalf("push with nothing to send ran %q, want the URL question alone", cmds)
	}
	if !pr.UpToDate || len(pr.Warnings) != 1 || !strings.Contains(pr.Warnings[0], "HEAD names a branch it does not have") {
		t.Fatalf("push: %+v, want up to date with the HEAD warning", pr)
	}
	if res := mustPull(t, b, "origin"); !res.UpToDate {
		t.Fatalf("pull: %+v, want up to date", res)
	}
	if cmds := logged(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "config --show-scope --null --get-regexp") {
		t.Fatalf("pull with nothing to fetch ran %q, want the URL question alone", cmds)
	}
	for _, p := range []*project{a, b} {
		if pr, err := Push(ctx, p.s, "served", Options{}); err != nil || !pr.UpToDate {
			t.Fatalf("push to the daemon: %+v, %v", pr, err)
		}
		if cmds := logged(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "ls-remote --symref") {
			t.Fatalf("push with nothing to send to a daemon ran %q, want the listing alone", cmds)
		}
	}
	if res := mustPull(t, b, "served"); !res.UpToDate {
		t.Fatalf("pull from the daemon: %+v, want up to date", res)
	}
	// a pull lists a git:// remote in protocol v0 (LsRemoteWhole); a push
	// in v2, which reports an empty remote's unborn HEAD
	if cmds := logged(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "-c protocol.version=0 ls-remote --symref") {
		t.Fatalf("pull with nothing to fetch from a daemon ran %q, want the listing alone, in protocol v0", cmds)
	}

	// a push with something to send asks for the push URLs, once, and
	// reads HEAD again in place (it named no branch before the push)
	a.run(t, "r2", "a")
	mustPush(t, a, "origin")
	if cmds := logged(); len(cmds) != 2 || !strings.HasPrefix(cmds[0], "config --show-scope --null --get-regexp") || !strings.Contains(cmds[1], " push --atomic") {
		t.Fatalf("push of a run ran %q", cmds)
	}

	if err := RemoveRemote(ctx, b.s, "origin"); err != nil {
		t.Fatal(err)
	}
	if cmds := logged(); len(cmds) != 1 || !strings.HasPrefix(cmds[0], "remote remove") {
		t.Fatalf("remote rm ran %q, want git remote remove alone", cmds)
	}
	if err := RemoveRemote(ctx, b.s, "origin"); !errors.Is(err, gitstore.ErrNoRemote) {
		t.Fatalf("second remote rm: %v, want ErrNoRemote", err)
	}
	logged()

	// configured in the environment only: git resolves it, as before
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "remote.env.url")
	t.Setenv("GIT_CONFIG_VALUE_0", dir)
	if res, err := Pull(ctx, b.s, "env", Options{}); err != nil || len(res.NewRuns) != 1 {
		t.Fatalf("pull of a remote from the environment: %v", err)
	}
	if cmds := logged(); len(cmds) < 2 || !strings.HasPrefix(cmds[0], "config --show-scope") || strings.HasPrefix(cmds[1], "ls-remote") {
		t.Fatalf("pull of a remote from the environment ran %q, want its URL read by one git config first, and no listing by git", cmds)
	}
	_, err := Pull(ctx, b.s, "nothere", Options{})
	if !errors.Is(err, gitstore.ErrNoRemote) || !strings.Contains(hint.Of(err), "remote add nothere") {
		t.Fatalf("pull of an unknown remote: %v (hint %q)", err, hint.Of(err))
	}
}

// TestURLRewrittenOnce: git rewrites a remote's URL by one insteadOf rule,
// never by a chain of them: with rules a/ -> b/ and b/ -> c/, `git push
// origin` and `git fetch origin` of a remote at a/r.git go to b/r.git. A
// push and the journal probe of a pull go to the URL git resolved, which
// git is given with a rule that keeps it as it is: they went to c/r.git
// (the push landed in another repository than the one listed; the probe,
// made in a scratch repository that sees rules of the global scope, read
// a repository without the journal). The rules are in the store's config,
// then in the global one.
func TestURLRewrittenOnce(t *testing.T) {
	for _, scope := range []string{"local", "global"} {
		t.Run(scope, func(t *testing.T) {
			base := t.TempDir()
			for _, d := range []string{"b", "c"} {
				os.MkdirAll(filepath.Join(base, d), 0o755)
				bareServer(t, filepath.Join(base, d), "r.git")
			}
			d := startDaemon(t, base)
			rules := "[url \"" + d.url("b/") + "\"]\n\tinsteadOf = " + d.url("a/") + "\n[url \"" + d.url("c/") + "\"]\n\tinsteadOf = " + d.url("b/") + "\n"
			chain := func(p *project) {
				addRemote(t, p, "origin", d.url("a/r.git"))
				cfg := filepath.Join(base, "global")
				if scope == "local" {
					cfg = filepath.Join(p.path(), "config")
				}
				f, err := os.OpenFile(cfg, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString(rules)
				f.Close()
				if scope == "global" {
					t.Setenv("GIT_CONFIG_GLOBAL", cfg)
				}
				cmd := exec.Command("git", "--git-dir="+p.path(), "ls-remote", "--get-url", "origin")
				out, err := cmd.Output()
				if got, want := strings.TrimSpace(string(out)), d.url("b/r.git"); err != nil || got != want {
					t.Fatalf("git resolves origin to %s (%v), want %s", got, err, want)
				}
			}
			a := newProject(t, map[string]string{"a": "alpha\n"})
			a.run(t, "r1", "a")
			chain(a)
			if pr := mustPush(t, a, "origin"); len(pr.Runs) != 1 {
				t.Fatalf("push: %+v", pr)
			}
			if refs := allRefs(t, filepath.Join(base, "b", "r.git")); !strings.Contains(refs, "refs/heads/main") {
				t.Fatalf("b/r.git (where git pushes) holds %q", refs)
			}
			if refs := allRefs(t, filepath.Join(base, "c", "r.git")); refs != "" {
				t.Fatalf("c/r.git (the rewrite of the rewrite) holds %q", refs)
			}
			b := newProject(t, map[string]string{"a": "alpha\n"})
			chain(b)
			if res := mustPull(t, b, "origin"); len(res.NewRuns) != 1 {
				t.Fatalf("pull: %+v", res)
			}
		})
	}
}

// TestKnownRemoteErrorsAsBefore: a push or pull of a remote the store's
// config names, which skips the URL question before the listing, still
// fails as it did when that question came first: with a global config git
// cannot read, the error is the URL question's (what connect returned
// before), not the listing's.
func TestKnownRemoteErrorsAsBefore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "r.git")
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", dir)
	p := newProject(t, map[string]string{"a": "alpha\n"})
	p.run(t, "r1", "a")
	addRemote(t, p, "origin", dir)
	broken := filepath.Join(t.TempDir(), "gitconfig")
	writeFile(t, broken, "[broken\n")
	t.Setenv("GIT_CONFIG_GLOBAL", broken)
	tr, err := Options{}.transport(p.s.Git())
	if err != nil {
		t.Fatal(err)
	}
	if !tr.RemoteInRepoConfig("origin") {
		t.Fatal("the remote is not read from the store's config: the test proves nothing")
	}
	for _, verb := range []string{"push", "pull"} {
		var got error
		if verb == "push" {
			_, got = Push(ctx, p.s, "origin", Options{})
		} else {
			_, got = Pull(ctx, p.s, "origin", Options{})
		}
		_, _, _, want := remoteURLs(ctx, tr, "origin", verb)
		if got == nil || want == nil || got.Error() != want.Error() || hint.Of(got) != hint.Of(want) {
			t.Fatalf("%s with a broken global config: %v (hint %q); the URL question: %v (hint %q)", verb, got, hint.Of(got), want, hint.Of(want))
		}
	}
}

// TestOneConfigPerCommand: a push or a pull reads the remote's
// configuration (every scope, with the insteadOf rules) with one `git
// config` and answers every later question of the same command from it. A
// push to a remote on this machine asked for the push URLs and, when the
// remote's journal was new to the store, for the fetch URL to probe it: two
// git config processes with one answer. The push of a store that has not
// pulled the remote's journal is refused (pull first) after that probe; the
// pull that follows, and a push with something to send, each run one.
func TestOneConfigPerCommand(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "r.git")
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=main", dir)
	a := newProject(t, map[string]string{"a": "alpha\n"})
	a.run(t, "r1", "a")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"b": "beta\n"})
	b.run(t, "r2", "b")
	addRemote(t, b, "origin", dir)

	logged := gitLog(t)
	configs := func(cmds []string) int {
		n := 0
		for _, c := range cmds {
			if strings.HasPrefix(c, "config ") {
				n++
			}
		}
		return n
	}
	_, err := Push(ctx, b.s, "origin", Options{})
	cmds := logged()
	if !errors.Is(err, ErrRejected) || !strings.Contains(hint.Of(err), "pull first") {
		t.Fatalf("push of a store behind the remote: %v, want pull first", err)
	}
	if configs(cmds) != 1 || !strings.HasPrefix(cmds[0], "config --show-scope --null --get-regexp") {
		t.Fatalf("refused push ran %q, want one git config", cmds)
	}
	if res := mustPull(t, b, "origin"); len(res.NewRuns) != 1 {
		t.Fatalf("pull: %+v", res)
	}
	if cmds := logged(); configs(cmds) != 1 {
		t.Fatalf("pull ran %q, want one git config", cmds)
	}
	if res := mustPush(t, b, "origin"); len(res.Runs) != 1 {
		t.Fatalf("push: %+v", res)
	}
	if cmds := logged(); configs(cmds) != 1 {
		t.Fatalf("push ran %q, want one git config", cmds)
	}
}

// TestPushAsksHeadOnlyAfterCreate: after a push, a remote whose listing
// showed no HEAD (here HEAD names trunk, which the remote lacks) is asked
// for its HEAD again only when the push created a ref (a refspec names a
// ref the listing lacked): only such a ref can be the branch an unborn
// HEAD names, which the listing cannot say. A push that fast-forwards refs
// the remote had leaves the listing's answer standing, and asks nothing.
func TestPushAsksHeadOnlyAfterCreate(t *testing.T) {
	ctx := context.Background()
	srv := t.TempDir()
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=trunk", filepath.Join(srv, "r.git"))
	d := startDaemon(t, srv)
	a := newProject(t, map[string]string{"a": "alpha\n"})
	a.run(t, "r1", "a")
	addRemote(t, a, "served", d.url("r.git"))

	logged := gitLog(t)
	pr := mustPush(t, a, "served")
	cmds := logged()
	if len(cmds) != 4 || !strings.HasPrefix(cmds[0], "ls-remote --symref") || !strings.HasPrefix(cmds[1], "config ") ||
		!strings.Contains(cmds[2], " push --atomic") || !strings.HasPrefix(cmds[3], "ls-remote --symref") || !strings.HasSuffix(cmds[3], " HEAD") {
		t.Fatalf("first push ran %q, want the listing, the URL, the push and HEAD asked again", cmds)
	}
	if len(pr.Warnings) != 1 || !strings.Contains(pr.Warnings[0], "HEAD names a branch it does not have") {
		t.Fatalf("first push: warnings %q", pr.Warnings)
	}

	// the plan of the next push: a new run creates its run ref; with the
	// run already on the remote, only main moves, and nothing is created
	a.run(t, "r2", "a")
	tr, err := Options{}.transport(a.s.Git())
	if err != nil {
		t.Fatal(err)
	}
	listed, _, err := tr.LsRemoteHead(ctx, "served")
	if err != nil {
		t.Fatal(err)
	}
	plan := func(runOnRemote bool) *pusher {
		p := &pusher{ctx: ctx, g: a.s.Git(), t: tr, rem: stateFromRefs(listed), res: &PushResult{}}
		if p.local, err = readState(p.g, localPrefixes()); err != nil {
			t.Fatal(err)
		}
		if p.tagConflicts, err = readTagConflicts(p.g); err != nil {
			t.Fatal(err)
		}
		if runOnRemote {
			m, _ := p.local.runs.get("r2")
			p.rem.runs = newRefList(store.RunsPrefix, append(slices.Clone(p.rem.runs.refs), gitstore.Ref{Name: store.RunsPrefix + "r2", OID: m}))
		}
		immutable := p.runSpecs()
		moving, err := p.movingSpecs()
		if err != nil || len(p.behind) > 0 || len(immutable)+len(moving) == 0 {
			t.Fatalf("plan: %q %q, behind %q, %v", immutable, moving, p.behind, err)
		}
		return p
	}
	if !plan(false).creates {
		t.Fatal("a push of a new run does not create a ref")
	}
	if p := plan(true); p.creates {
		t.Fatal("a push that moves main alone creates a ref")
	}
	logged()
	if w := warnHead(ctx, tr, "served", true, "", false); len(w) != 1 || !strings.Contains(w[0], "a branch it does not have") {
		t.Fatalf("warning after a push that created nothing: %q", w)
	}
	if cmds := logged(); len(cmds) != 0 {
		t.Fatalf("HEAD asked again after a push that created nothing: %q", cmds)
	}
	// and a push that creates one asks again
	mustPush(t, a, "served")
	if cmds := logged(); len(cmds) != 4 || !strings.HasSuffix(cmds[3], " HEAD") {
		t.Fatalf("push of a new run ran %q, want HEAD asked again", cmds)
	}
}
