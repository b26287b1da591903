package gitstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// mirrorGit runs stock git in dir (a work tree or a bare repository),
// with auto maintenance off: each commit to an upstream would start a `git
// maintenance run --auto` (about 200 processes in this package) that has
// nothing to do on these small repositories.
func mirrorGit(t testing.TB, dir string, args ...string) string {
	t.Helper()
	git, err := findGit() // once per PATH, not a PATH walk per command
	if err != nil {
		t.Skip("git is not installed")
	}
	cmd := exec.Command(git, args...)
	cmd.Dir = dir
	cmd.Env = append(gitEnv(), "HOME="+dir, "GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func mirrorWrite(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// upstream makes a work-tree repository with one commit on main (doc.md
// "v1\n"): a copy of one stock git made once per test process (git init,
// add and commit were three processes per upstream).
func upstream(t testing.TB) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	tmpl, err := upstreamTemplate.get(t, upstreamBuild)
	if err != nil {
		t.Fatalf("template upstream: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "up")
	if err := testproc.CopyTree(tmpl, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// upstreamTemplate is the repository upstream copies, made on first use.
var upstreamTemplate templateRepo

// upstreamBuild makes the upstream template in dir.
func upstreamBuild(t testing.TB, dir string) {
	mirrorGit(t, dir, "init", "-q", "-b", "main")
	mirrorWrite(t, filepath.Join(dir, "doc.md"), "v1\n")
	mirrorGit(t, dir, "add", ".")
	mirrorGit(t, dir, "commit", "-q", "-m", "v1")
}

// gitInit makes dir a repository as `git init ARGS... dir` does: a copy of
// one that stock git made with the same arguments once per test process
// (git init takes no input but its arguments; GitCommand pins its
// environment).
func gitInit(t testing.TB, dir string, args ...string) {
	t.Helper()
	v, _ := initTemplates.LoadOrStore(strings.Join(args, "\x00"), &templateRepo{})
	tmpl, err := v.(*templateRepo).get(t, func(t testing.TB, d string) {
		git(t, "", append(append([]string{"init"}, args...), d)...)
	})
	if err != nil {
		t.Fatalf("template for git init %s: %v", strings.Join(args, " "), err)
	}
	if err := testproc.CopyTree(tmpl, dir); err != nil {
		t.Fatal(err)
	}
}

// initTemplates holds gitInit's templates by their git init arguments.
var initTemplates sync.Map

// removeTemplates deletes every template (TestMain calls it).
func removeTemplates() {
	upstreamTemplate.remove()
	initTemplates.Range(func(_, v any) bool {
		v.(*templateRepo).remove()
		return true
	})
}

// templateRepo is a repository made once per test process, in its own
// temporary directory, for tests to copy.
type templateRepo struct {
	once sync.Once
	dir  string
	err  error
}

// get makes the template with build(dir) on first use and returns dir.
func (r *templateRepo) get(t testing.TB, build func(t testing.TB, dir string)) (string, error) {
	r.once.Do(func() {
		var top string
		if top, r.err = os.MkdirTemp("", "gitstore-template"); r.err != nil {
			return
		}
		dir := filepath.Join(top, "repo")
		if r.err = os.MkdirAll(dir, 0o755); r.err != nil {
			return
		}
		r.dir = dir
		// until build returns (a failing git command ends this test)
		r.err = errors.New("making it failed in an earlier test")
		build(t, dir)
		r.err = nil
	})
	return r.dir, r.err
}

func (r *templateRepo) remove() {
	if r.dir != "" {
		os.RemoveAll(filepath.Dir(r.dir))
	}
}

// commitFile writes and commits one file and returns the new commit's id,
// read from the branch's loose ref that git commit just wrote (git
// rev-parse HEAD when it is not there).
func commitFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	mirrorWrite(t, filepath.Join(dir, name), content)
	mirrorGit(t, dir, "add", name)
	mirrorGit(t, dir, "commit", "-q", "-m", "edit "+name)
	if head, err := os.ReadFile(filepath.Join(dir, ".git", "HEAD")); err == nil {
		if ref, ok := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: "); ok {
			if id, err := os.ReadFile(filepath.Join(dir, ".git", filepath.FromSlash(ref))); err == nil && isHexOID(strings.TrimSpace(string(id))) {
				return strings.TrimSpace(string(id))
			}
		}
	}
	return mirrorGit(t, dir, "rev-parse", "HEAD")
}

func fetched(t testing.TB, cache, url string) *Mirror {
	t.Helper()
	m, err := OpenMirror(cache, url, MirrorOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("Fetch: %v", err)
	}
	return m
}

func TestMirrorResolve(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	c1 := mirrorGit(t, up, "rev-parse", "HEAD")
	mirrorGit(t, up, "tag", "-a", "-m", "release", "v1")
	mirrorGit(t, up, "tag", "light")
	mirrorGit(t, up, "branch", "old")
	commitFile(t, up, "docs/deep/b.md", "deep\n")
	c2 := commitFile(t, up, "doc.md", "v2\n")
	if err := os.Symlink("doc.md", filepath.Join(up, "link")); err != nil {
		t.Fatal(err)
	}
	mirrorGit(t, up, "add", "link")
	mirrorGit(t, up, "commit", "-q", "-m", "link")
	head := mirrorGit(t, up, "rev-parse", "HEAD")
	// A tag named like a branch wins, as in git.
	mirrorGit(t, up, "tag", "old-tag-and-branch", c1)
	mirrorGit(t, up, "branch", "old-tag-and-branch", c2)

	m := fetched(t, t.TempDir(), up)
	for ref, want := range map[string]struct{ content, commit string }{
		"":                   {"v2\n", head},
		"HEAD":               {"v2\n", head},
		"main":               {"v2\n", head},
		"refs/heads/main":    {"v2\n", head},
		"old":                {"v1\n", c1},
		"v1":                 {"v1\n", c1},
		"refs/tags/v1":       {"v1\n", c1},
		"light":              {"v1\n", c1},
		c1:                   {"v1\n", c1},
		c2:                   {"v2\n", c2},
		"old-tag-and-branch": {"v1\n", c1},
	} {
		content, commit, blob, err := m.ResolveFile(ref, "doc.md", 1<<20)
		if err != nil {
			t.Fatalf("ref %q: %v", ref, err)
		}
		if string(content) != want.content || commit != want.commit {
			t.Errorf("ref %q: %q at %s, want %q at %s", ref, content, commit, want.content, want.commit)
		}
		if b := mirrorGit(t, up, "rev-parse", commit+":doc.md"); blob != b {
			t.Errorf("ref %q: blob %s, want %s", ref, blob, b)
		}
	}
	if content, _, _, err := m.ResolveFile("main", "/docs/deep/b.md", 100); err != nil || string(content) != "deep\n" {
		t.Errorf("nested path: %q, %v", content, err)
	}

	// The annotated tag's object id also names the commit it tags.
	tagObj := mirrorGit(t, up, "rev-parse", "v1")
	if _, commit, _, err := m.ResolveFile(tagObj, "doc.md", 100); err != nil || commit != c1 {
		t.Errorf("tag object id: %s, %v", commit, err)
	}

	errCases := []struct {
		ref, path string
		max       int64
		want      error
	}{
		{"nope", "doc.md", 100, ErrUnknownRef},
		{strings.Repeat("0", 40), "doc.md", 100, ErrUnknownRef},
		{"refs/heads/nope", "doc.md", 100, ErrUnknownRef},
		{"main", "missing.md", 100, ErrPathNotFound},
		{"main", "doc.md/below", 100, ErrPathNotFound},
		{"main", "docs/nope/b.md", 100, ErrPathNotFound},
		{"main", "docs", 100, ErrNotFile},
		{"main", "link", 100, ErrNotFile},
		{"main", "doc.md", 2, ErrFileTooLarge},
	}
	for _, c := range errCases {
		_, _, _, err := m.ResolveFile(c.ref, c.path, c.max)
		if !errors.Is(err, c.want) {
			t.Errorf("ResolveFile(%q, %q, %d) = %v, want %v", c.ref, c.path, c.max, err, c.want)
		}
	}
	if content, _, _, err := m.ResolveFile("main", "doc.md", 3); err != nil || string(content) != "v2\n" {
		t.Errorf("at the limit: %q, %v", content, err)
	}
	for _, p := range []string{"", "a/../doc.md", "./doc.md", "a//b", "x\x00"} {
		if _, _, _, err := m.ResolveFile("main", p, 100); err == nil {
			t.Errorf("path %q accepted", p)
		}
	}
	// Stock git can read the mirror.
	mirrorGit(t, m.Dir(), "fsck", "--strict", "--no-progress")
}

func packStats(t *testing.T, dir string) (packs, objects int) {
	t.Helper()
	out := mirrorGit(t, dir, "count-objects", "-v")
	for _, line := range strings.Split(out, "\n") {
		k, v, _ := strings.Cut(line, ": ")
		n, _ := strconv.Atoi(v)
		switch k {
		case "packs":
			packs = n
		case "in-pack":
			objects += n
		case "count":
			objects += n
		}
	}
	return packs, objects
}

func TestMirrorIncrementalFetch(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	for i := 0; i < 5; i++ {
		commitFile(t, up, fmt.Sprintf("file%d.md", i), strings.Repeat("x", i+1))
	}
	m := fetched(t, t.TempDir(), up)
	packs, objects := packStats(t, m.Dir())

	// Nothing new upstream: nothing transferred.
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if p, o := packStats(t, m.Dir()); p != packs || o != objects {
		t.Fatalf("no-op fetch changed the mirror: %d packs/%d objects -> %d/%d", packs, objects, p, o)
	}

	// One new commit: its commit, root tree and blob, nothing else.
	head := commitFile(t, up, "new.md", "brand new\n")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	p, o := packStats(t, m.Dir())
	if p != packs+1 || o != objects+3 {
		t.Fatalf("incremental fetch: %d packs/%d objects -> %d/%d, want one pack of 3 objects", packs, objects, p, o)
	}
	if content, commit, _, err := m.ResolveFile("main", "new.md", 100); err != nil || commit != head || string(content) != "brand new\n" {
		t.Fatalf("after incremental fetch: %q %s %v", content, commit, err)
	}
	mirrorGit(t, m.Dir(), "fsck", "--strict", "--no-progress")
}

func TestMirrorFollowsRewritesAndDeletes(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	base := mirrorGit(t, up, "rev-parse", "HEAD")
	mirrorGit(t, up, "branch", "topic")
	mirrorGit(t, up, "tag", "gone")
	commitFile(t, up, "doc.md", "v2\n")
	m := fetched(t, t.TempDir(), up)
	if _, _, _, err := m.ResolveFile("topic", "doc.md", 100); err != nil {
		t.Fatal(err)
	}

	// Force-push main to a different history, delete a branch and a tag.
	mirrorGit(t, up, "reset", "-q", "--hard", base)
	rewritten := commitFile(t, up, "doc.md", "rewritten\n")
	mirrorGit(t, up, "branch", "-D", "topic")
	mirrorGit(t, up, "tag", "-d", "gone")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	content, commit, _, err := m.ResolveFile("main", "doc.md", 100)
	if err != nil || commit != rewritten || string(content) != "rewritten\n" {
		t.Fatalf("after a force push: %q %s %v", content, commit, err)
	}
	for _, ref := range []string{"topic", "gone"} {
		if _, _, _, err := m.ResolveFile(ref, "doc.md", 100); !errors.Is(err, ErrUnknownRef) {
			t.Errorf("deleted %s: %v", ref, err)
		}
	}
	// HEAD follows the remote's default branch.
	mirrorGit(t, up, "checkout", "-q", "-b", "trunk")
	trunk := commitFile(t, up, "doc.md", "trunk\n")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, commit, _, err := m.ResolveFile("HEAD", "doc.md", 100); err != nil || commit != trunk {
		t.Errorf("HEAD after the default branch changed: %s, %v", commit, err)
	}
}

func TestMirrorCacheCanBeDeleted(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	cache := t.TempDir()
	m := fetched(t, cache, up)
	if err := os.RemoveAll(m.Dir()); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := m.ResolveFile("main", "doc.md", 100); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("resolve before re-fetching: %v", err)
	}
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("fetch after deletion: %v", err)
	}
	if content, _, _, err := m.ResolveFile("main", "doc.md", 100); err != nil || string(content) != "v1\n" {
		t.Fatalf("after re-fetch: %q, %v", content, err)
	}
	// A damaged mirror (here: not a repository at all) is made again.
	if err := os.RemoveAll(m.Dir()); err != nil {
		t.Fatal(err)
	}
	mirrorWrite(t, filepath.Join(m.Dir(), "junk"), "junk")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("fetch over a damaged mirror: %v", err)
	}
	if _, _, _, err := m.ResolveFile("main", "doc.md", 100); err != nil {
		t.Fatal(err)
	}
	// The whole cache directory, too.
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("fetch after deleting the cache: %v", err)
	}
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".init-") {
			t.Errorf("temporary directory left behind: %s", e.Name())
		}
	}
}

func TestMirrorDirectories(t *testing.T) {
	t.Parallel()
	cache := t.TempDir()
	a, _ := OpenMirror(cache, "https://example.com/a.git", MirrorOptions{})
	a2, _ := OpenMirror(cache, "https://example.com/a.git", MirrorOptions{})
	b, _ := OpenMirror(cache, "https://example.com/b.git", MirrorOptions{})
	if a.Dir() != a2.Dir() || a.Dir() == b.Dir() || filepath.Dir(a.Dir()) != cache {
		t.Errorf("dirs %s %s %s", a.Dir(), a2.Dir(), b.Dir())
	}
	if strings.Contains(a.Dir(), "example") {
		t.Errorf("mirror directory %s reveals the URL", a.Dir())
	}
	for _, bad := range [][2]string{{"", "https://x/y"}, {cache, ""}, {cache, "https://[::1/"}} {
		if _, err := OpenMirror(bad[0], bad[1], MirrorOptions{}); err == nil {
			t.Errorf("OpenMirror(%q, %q) accepted", bad[0], bad[1])
		}
	}
	_, err := OpenMirror(cache, "https://user:hunter2@[::1/", MirrorOptions{})
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("bad URL with a password: %v", err)
	}
}

func TestMirrorEmptyAndMissingRemotes(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	empty := filepath.Join(t.TempDir(), "empty.git")
	mirrorGit(t, t.TempDir(), "init", "-q", "--bare", empty)
	m := fetched(t, t.TempDir(), empty)
	if _, _, _, err := m.ResolveFile("HEAD", "doc.md", 100); !errors.Is(err, ErrUnknownRef) {
		t.Errorf("empty remote: %v", err)
	}
	m, _ = OpenMirror(t.TempDir(), filepath.Join(t.TempDir(), "missing"), MirrorOptions{})
	if err := m.Fetch(context.Background()); !errors.Is(err, ErrRepoNotFound) {
		t.Errorf("missing remote: %v", err)
	}
}

func TestMirrorConcurrentFetches(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	cache := t.TempDir()
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	var commits atomic.Int32
	stop := make(chan struct{})
	committerDone := make(chan struct{})
	go func() {
		defer close(committerDone)
		// At most one commit per fetch: on a loaded machine, where the
		// fetches take longer, the committer made up to 90.
		for i := 0; i < 32; i++ {
			select {
			case <-stop:
				return
			default:
			}
			commitFile(t, up, "doc.md", fmt.Sprintf("v%d\n", i+2))
			commits.Add(1)
			// About one commit per fetch (the fetches take turns on the
			// mirror's lock): with 10 ms the committer made some 190
			// commits, three git processes each, during the 32 fetches.
			time.Sleep(40 * time.Millisecond)
		}
	}()
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each worker has its own Mirror value, as separate processes
			// would: only the lock file coordinates them.
			m, err := OpenMirror(cache, up, MirrorOptions{})
			if err != nil {
				errs <- err
				return
			}
			for i := 0; i < 4; i++ {
				if err := m.Fetch(context.Background()); err != nil {
					errs <- fmt.Errorf("fetch: %w", err)
					return
				}
				content, _, _, err := m.ResolveFile("main", "doc.md", 100)
				if err != nil || !strings.HasPrefix(string(content), "v") {
					errs <- fmt.Errorf("resolve: %q, %v", content, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(stop)
	<-committerDone // its last commit must end before the directories are removed
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	m, _ := OpenMirror(cache, up, MirrorOptions{})
	mirrorGit(t, m.Dir(), "fsck", "--strict", "--no-progress")
}

func TestMirrorContext(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	cache := t.TempDir()
	m, _ := OpenMirror(cache, up, MirrorOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Fetch(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled fetch: %v", err)
	}
	// A fetch waiting for another's lock gives up when its context ends.
	unlock, err := lockMirror(context.Background(), m.lock, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer unlock()
	ctx, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	start := time.Now()
	if err := m.Fetch(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("fetch behind a held lock: %v", err)
	}
	// A timeout test: it ended because of the deadline (the error says
	// so); the wall bound, 300 times the deadline, is for loaded machines.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("waited %s for the lock, past its deadline of 100ms", d)
	}
}

// countingTransport records the requests go-git sends through the client
// it was given.
type countingTransport struct {
	n    atomic.Int32
	next http.RoundTripper
}

func (c *countingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	c.n.Add(1)
	return c.next.RoundTrip(r)
}

var errRefusedByTest = errors.New("refused by the test client")

type refusingTransport struct{}

func (refusingTransport) RoundTrip(*http.Request) (*http.Response, error) {
	return nil, errRefusedByTest
}

func TestMirrorUsesGivenHTTPClient(t *testing.T) {
	t.Parallel()
	up := upstream(t)
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path failed")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skip("git http-backend unavailable")
	}
	root := filepath.Dir(up)
	srv := httptest.NewServer(&cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}, Stderr: io.Discard})
	defer srv.Close()
	url := srv.URL + "/up/.git"

	ct := &countingTransport{next: http.DefaultTransport}
	m, err := OpenMirror(t.TempDir(), url, MirrorOptions{HTTPClient: &http.Client{Transport: ct}})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatalf("fetch over smart HTTP: %v", err)
	}
	if ct.n.Load() < 2 {
		t.Errorf("the given client carried %d requests", ct.n.Load())
	}
	if content, _, _, err := m.ResolveFile("main", "doc.md", 100); err != nil || string(content) != "v1\n" {
		t.Fatalf("over smart HTTP: %q, %v", content, err)
	}
	commitFile(t, up, "doc.md", "v2\n")
	if err := m.Fetch(context.Background()); err != nil {
		t.Fatal(err)
	}
	if content, _, _, _ := m.ResolveFile("main", "doc.md", 100); string(content) != "v2\n" {
		t.Errorf("incremental over smart HTTP: %q", content)
	}

	m, _ = OpenMirror(t.TempDir(), url, MirrorOptions{HTTPClient: &http.Client{Transport: refusingTransport{}}})
	if err := m.Fetch(context.Background()); !errors.Is(err, errRefusedByTest) {
		t.Errorf("refusing client: %v", err)
	}
}

func FuzzCleanTreePath(f *testing.F) {
	for _, s := range []string{"doc.md", "/a/b", "a/../b", "", ".", "a//b", "a/./b", "x\x00y", "ünï/cødé"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		clean, err := cleanTreePath(p)
		if err != nil {
			return
		}
		if clean == "" || strings.HasPrefix(clean, "/") || strings.ContainsRune(clean, 0) {
			t.Fatalf("cleanTreePath(%q) = %q", p, clean)
		}
		for _, seg := range strings.Split(clean, "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("cleanTreePath(%q) = %q has segment %q", p, clean, seg)
			}
		}
		if again, err := cleanTreePath(clean); err != nil || again != clean {
			t.Fatalf("cleanTreePath is not idempotent on %q: %q, %v", clean, again, err)
		}
	})
}
