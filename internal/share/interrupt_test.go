package share

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testsize"
)

// TestInterruptedPush kills the git daemon (and the receive-pack it runs)
// early in a large push (after its first megabyte at full size): the push fails without a
// rejection, both repositories stay consistent (fsck clean, every ref names
// a complete object graph, the server's refs unchanged), and a retry
// against a restarted server succeeds.
func TestInterruptedPush(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	base := t.TempDir()
	dir := bareServer(t, base, "shared.git")
	d := startDaemon(t, base)
	// Random bytes in hex, so the pack stays over half their size; the
	// proxy lets an eighth of the hex through (at most 1 MiB), so the server
	// is killed early in the transfer. 256 KiB of random bytes per document
	// by default, 2 MiB under READPROOF_LONG_TESTS=1.
	size := testsize.Pick(t, 256<<10, 2<<20)
	limit := min(int64(size)/2, 1<<20)
	big := func() string {
		b := make([]byte, size)
		rand.Read(b)
		return hex.EncodeToString(b)
	}
	a := newProject(t, map[string]string{"small": "small\n", "big1": big(), "big2": big()})
	a.run(t, "small", "small")
	addRemote(t, a, "origin", d.url("shared.git"))
	mustPush(t, a, "origin")
	a.run(t, "large", "big1", "big2")

	proxy := startKillingProxy(t, d, limit)
	addRemote(t, a, "flaky", proxy.url("shared.git"))
	serverBefore := allRefs(t, dir)
	localBefore := allRefs(t, a.path())
	_, err := Push(ctx, a.s, "flaky", Options{})
	if err == nil {
		t.Fatal("push through a server killed mid-transfer succeeded")
	}
	if errors.Is(err, ErrRejected) {
		t.Fatalf("an interrupted push reads as a rejection: %v", err)
	}
	if !proxy.killed.Load() {
		t.Fatalf("the server was not killed: %v", err)
	}
	t.Logf("interrupted push: %v", err)
	if after := allRefs(t, dir); after != serverBefore {
		t.Fatalf("server refs changed by an interrupted push:\nbefore:\n%s\nafter:\n%s", serverBefore, after)
	}
	if after := allRefs(t, a.path()); after != localBefore {
		t.Fatalf("local refs changed by an interrupted push:\nbefore:\n%s\nafter:\n%s", localBefore, after)
	}
	gitstore.Fsck(t, dir)
	gitstore.Fsck(t, a.path())
	checkConnected(t, dir)

	// Retry against the restarted server.
	d2 := startDaemon(t, base)
	if err := RemoveRemote(ctx, a.s, "origin"); err != nil {
		t.Fatal(err)
	}
	addRemote(t, a, "origin", d2.url("shared.git"))
	res := mustPush(t, a, "origin")
	if len(res.Runs) != 1 || res.Runs[0].RunID != "large" {
		t.Fatalf("retry: %+v", res)
	}
	gitstore.Fsck(t, dir)
	checkConnected(t, dir)
	cl, err := Clone(ctx, d2.url("shared.git"), filepath.Join(t.TempDir(), "clone"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(cl.NewRuns) != 2 {
		t.Fatalf("clone after retry: %+v", cl)
	}
}

// checkConnected asks stock git whether every ref reaches only objects
// that exist.
func checkConnected(t *testing.T, gitDir string) {
	t.Helper()
	cmd := gitstore.GitCommand(t, gitDir, "rev-list", "--objects", "--all", "--missing=print")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("rev-list --objects --all: %v\n%s", err, out)
	}
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, "?") {
			t.Fatalf("%s: missing object %s", gitDir, l)
		}
	}
}

// TestAuditorStockClone: an auditor uses stock git only: a plain `git
// clone` of the shared repository replays every run and `git log` shows the
// manifest commits.
func TestAuditorStockClone(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := bareServer(t, base, "shared.git")
	d := startDaemon(t, base)
	a := newProject(t, map[string]string{"policy": "refunds within 30 days\n"})
	b := newProject(t, map[string]string{"runbook": "deploy\n"})
	ma := a.run(t, "a-run", "policy")
	mb := b.run(t, "b-run", "runbook")
	addRemote(t, a, "origin", d.url("shared.git"))
	addRemote(t, b, "origin", d.url("shared.git"))
	mustPush(t, a, "origin")
	mustPull(t, b, "origin")
	mustPush(t, b, "origin")

	clone := filepath.Join(t.TempDir(), "audit")
	git(t, "", "clone", "--quiet", d.url("shared.git"), clone)
	s, err := store.Open(clone, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := runs(t, s)
	if got["a-run"] != ma.ID || got["b-run"] != mb.ID {
		t.Fatalf("runs in the auditor's clone: %v", got)
	}
	replayAll(t, s)
	log := git(t, filepath.Join(clone, ".git"), "log", "--format=%s")
	for _, want := range []string{"readproof run a-run: 1 entry", "readproof run b-run: 1 entry", "merge journals"} {
		if !strings.Contains(log, want) {
			t.Fatalf("git log in the clone lacks %q:\n%s", want, log)
		}
	}
	gitstore.Fsck(t, clone)
	_ = dir
}

// TestCloneURLKinds clones through every kind of URL and refuses to clone
// over an existing store.
func TestCloneURLKinds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := servers(t)
	for _, kind := range []string{"path", "file", "daemon", "http"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			u, _ := srv[kind]("c-" + kind + ".git")
			a := newProject(t, map[string]string{"doc": "hello " + kind + "\n"})
			a.run(t, "r1", "doc")
			a.tag(t, "doc", "prod")
			addRemote(t, a, "origin", u)
			mustPush(t, a, "origin")
			dst := filepath.Join(t.TempDir(), "store")
			res, err := Clone(ctx, u, dst, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(res.NewRuns) != 1 || res.Journal != "adopted" || len(res.Tags) != 1 {
				t.Fatalf("clone: %+v", res)
			}
			if !gitstore.IsStore(dst) {
				t.Fatal("the clone is not a readproof store")
			}
			s, err := store.Open(dst, nil, store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			replayAll(t, s)
			if st, err := s.Tag(uri(t, "doc"), "prod"); err != nil || st.Snapshot == "" {
				t.Fatalf("tag in clone: %v", err)
			}
			if out := git(t, dst, "remote", "-v"); !strings.Contains(out, "origin\t"+u) {
				t.Fatalf("clone's remotes: %s", out)
			}
			if res, err := Pull(ctx, s, "origin", Options{}); err != nil || !res.UpToDate {
				t.Fatalf("pull right after clone: %+v %v", res, err)
			}
			gitstore.Fsck(t, dst)
			if _, err := Clone(ctx, u, dst, Options{}); !errors.Is(err, gitstore.ErrExists) {
				t.Fatalf("clone over a store: %v", err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		dst := filepath.Join(t.TempDir(), "store")
		_, err := Clone(ctx, filepath.Join(t.TempDir(), "nothing-here.git"), dst, Options{})
		var ee *exec.ExitError
		if err == nil || errors.As(err, &ee) {
			t.Fatalf("clone of a missing repository: %v", err)
		}
		if gitstore.IsStore(dst) {
			t.Fatal("a failed clone left a store")
		}
	})
}
