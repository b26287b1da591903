package adapters_test

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"github.com/readproof/readproof/internal/testproc"
	"io"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

// loopback allows the test servers, which listen on 127.0.0.1.
var loopback = adapters.NetPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}

// ---- filesystem ----

type dirFixture struct{ dir string }

func (f *dirFixture) Set(t *testing.T, content []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.dir, "doc"), content, 0o644); err != nil {
		t.Fatal(err)
	}
}

func (f *dirFixture) Delete(t *testing.T) {
	t.Helper()
	if err := os.Remove(filepath.Join(f.dir, "doc")); err != nil {
		t.Fatal(err)
	}
}

func (f *dirFixture) Source(t *testing.T, maxBytes int64) adapters.Source {
	return mustOpen(t, adapters.Spec{Type: "filesystem", Path: "doc"}, adapters.Env{BaseDir: f.dir, MaxBytes: maxBytes})
}

func mustOpen(t *testing.T, spec adapters.Spec, env adapters.Env) adapters.Source {
	t.Helper()
	src, err := adapters.Open(spec, env)
	if err != nil {
		t.Fatalf("Open(%+v): %v", spec, err)
	}
	return src
}

// ---- http ----

// docServer serves one document at /doc, with or without validators, and
// records the requests it receives.
type docServer struct {
	mu       sync.Mutex
	content  []byte
	present  bool
	etag     bool
	lastMod  time.Time
	requests []*http.Request
	srv      *httptest.Server
}

func newDocServer(t *testing.T, etag bool) *docServer {
	s := &docServer{etag: etag}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *docServer) serve(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, r.Clone(r.Context()))
	content, present, lastMod := append([]byte(nil), s.content...), s.present, s.lastMod
	s.mu.Unlock()
	if r.URL.Path != "/doc" || !present {
		http.NotFound(w, r)
		return
	}
	if s.etag {
		sum := sha256.Sum256(content)
		tag := `"` + hex.EncodeToString(sum[:8]) + `"`
		w.Header().Set("ETag", tag)
		if r.Header.Get("If-None-Match") == tag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	} else {
		w.Header().Set("Last-Modified", lastMod.UTC().Format(http.TimeFormat))
		if ims, err := http.ParseTime(r.Header.Get("If-Modified-Since")); err == nil && !lastMod.Truncate(time.Second).After(ims) {
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	w.Write(content)
}

func (s *docServer) Set(t *testing.T, content []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.content, s.present = append([]byte(nil), content...), true
	// Each change moves Last-Modified by a second, as a file's mtime would.
	if s.lastMod.IsZero() {
		s.lastMod = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	s.lastMod = s.lastMod.Add(time.Second)
}

func (s *docServer) Delete(t *testing.T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.present = false
}

func (s *docServer) Source(t *testing.T, maxBytes int64) adapters.Source {
	return mustOpen(t, adapters.Spec{Type: "http", URL: s.srv.URL + "/doc"}, adapters.Env{Network: loopback, MaxBytes: maxBytes})
}

// ---- github ----

type fakeCommit struct {
	id    string
	files map[string][]byte
}

// fakeGitHub implements the two endpoints the github adapter uses:
// commits/{ref} and contents/{path}?ref=, for one repository.
type fakeGitHub struct {
	mu       sync.Mutex
	owner    string
	repo     string
	commits  []fakeCommit
	rawOver  int    // files larger than this come with encoding "none"
	token    string // when set, required as a bearer token
	auths    []string
	override func(w http.ResponseWriter, r *http.Request) bool
	srv      *httptest.Server
}

func newFakeGitHub(t *testing.T, rawOver int) *fakeGitHub {
	g := &fakeGitHub{owner: "acme", repo: "company-docs", rawOver: rawOver}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /repos/{owner}/{repo}/commits/{ref...}", g.commitsHandler)
	mux.HandleFunc("GET /repos/{owner}/{repo}/contents/{path...}", g.contentsHandler)
	g.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		g.mu.Lock()
		g.auths = append(g.auths, r.Header.Get("Authorization"))
		override, token := g.override, g.token
		g.mu.Unlock()
		if override != nil && override(w, r) {
			return
		}
		if token != "" && r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(http.StatusUnauthorized)
			w.Write([]byte(`{"message":"Bad credentials"}`))
			return
		}
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(g.srv.Close)
	return g
}

func (g *fakeGitHub) setOverride(f func(w http.ResponseWriter, r *http.Request) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.override = f
}

func (g *fakeGitHub) setToken(tok string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.token = tok
}

func gitBlobID(content []byte) string {
	h := sha1.New()
	fmt.Fprintf(h, "blob %d\x00", len(content))
	h.Write(content)
	return hex.EncodeToString(h.Sum(nil))
}

func (g *fakeGitHub) commit(files map[string][]byte) {
	g.mu.Lock()
	defer g.mu.Unlock()
	sum := sha1.Sum([]byte("commit " + strconv.Itoa(len(g.commits))))
	g.commits = append(g.commits, fakeCommit{id: hex.EncodeToString(sum[:]), files: files})
}

func (g *fakeGitHub) head() map[string][]byte {
	out := map[string][]byte{}
	if n := len(g.commits); n > 0 {
		for k, v := range g.commits[n-1].files {
			out[k] = v
		}
	}
	return out
}

func (g *fakeGitHub) Set(t *testing.T, content []byte) {
	g.mu.Lock()
	files := g.head()
	g.mu.Unlock()
	files["docs/doc"] = append([]byte(nil), content...)
	g.commit(files)
}

func (g *fakeGitHub) Delete(t *testing.T) {
	g.mu.Lock()
	files := g.head()
	g.mu.Unlock()
	delete(files, "docs/doc")
	g.commit(files)
}

func (g *fakeGitHub) spec(path string) adapters.Spec {
	return adapters.Spec{Type: "github", Owner: g.owner, Repo: g.repo, Path: path, APIBase: g.srv.URL + "/"}
}

func (g *fakeGitHub) Source(t *testing.T, maxBytes int64) adapters.Source {
	return mustOpen(t, g.spec("docs/doc"), adapters.Env{Network: loopback, MaxBytes: maxBytes})
}

func ghError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(map[string]string{"message": msg})
}

func (g *fakeGitHub) find(ref string) (fakeCommit, bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if ref == "main" && len(g.commits) > 0 {
		return g.commits[len(g.commits)-1], true
	}
	for _, c := range g.commits {
		if c.id == ref {
			return c, true
		}
	}
	return fakeCommit{}, false
}

func (g *fakeGitHub) commitsHandler(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("owner") != g.owner || r.PathValue("repo") != g.repo {
		ghError(w, 404, "Not Found")
		return
	}
	c, ok := g.find(r.PathValue("ref"))
	if !ok {
		ghError(w, 422, "No commit found for SHA: "+r.PathValue("ref"))
		return
	}
	if r.Header.Get("Accept") == "application/vnd.github.sha" {
		w.Write([]byte(c.id))
		return
	}
	json.NewEncoder(w).Encode(map[string]string{"sha": c.id})
}

func (g *fakeGitHub) contentsHandler(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("owner") != g.owner || r.PathValue("repo") != g.repo {
		ghError(w, 404, "Not Found")
		return
	}
	c, ok := g.find(r.URL.Query().Get("ref"))
	if !ok {
		ghError(w, 404, "No commit found for the ref")
		return
	}
	p := r.PathValue("path")
	content, ok := c.files[p]
	if !ok {
		var dir []map[string]string
		var names []string
		for name := range c.files {
			if strings.HasPrefix(name, p+"/") {
				names = append(names, name)
			}
		}
		sort.Strings(names)
		for _, n := range names {
			dir = append(dir, map[string]string{"type": "file", "path": n})
		}
		if len(dir) > 0 {
			json.NewEncoder(w).Encode(dir)
			return
		}
		ghError(w, 404, "Not Found")
		return
	}
	if r.Header.Get("Accept") == "application/vnd.github.raw" {
		w.Header().Set("Content-Type", "application/vnd.github.raw")
		w.Write(content)
		return
	}
	body := map[string]any{"type": "file", "size": len(content), "path": p, "name": filepath.Base(p), "sha": gitBlobID(content)}
	if len(content) > g.rawOver {
		body["encoding"], body["content"] = "none", ""
	} else {
		// GitHub wraps base64 at 60 columns.
		enc := base64.StdEncoding.EncodeToString(content)
		var b strings.Builder
		for len(enc) > 60 {
			b.WriteString(enc[:60] + "\n")
			enc = enc[60:]
		}
		b.WriteString(enc + "\n")
		body["encoding"], body["content"] = "base64", b.String()
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(body)
}

// ---- git ----

// gitEnv isolates the stock git binary from the machine's configuration.
// Auto maintenance is off: the fixtures' commits would each start a `git
// maintenance run --auto` (91 processes in this package) on repositories
// far too small for it to do anything.
func gitEnv(home string) []string {
	return append(os.Environ(),
		"HOME="+home, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+filepath.Join(home, ".gitconfig"),
		"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=maintenance.auto", "GIT_CONFIG_VALUE_0=false",
		"GIT_AUTHOR_NAME=Test", "GIT_AUTHOR_EMAIL=test@example.com",
		"GIT_COMMITTER_NAME=Test", "GIT_COMMITTER_EMAIL=test@example.com",
		"GIT_TERMINAL_PROMPT=0",
	)
}

func runGit(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = gitEnv(dir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// gitFixture is a repository built with stock git, reached through url(dir).
type gitFixture struct {
	base string // the directory holding the repository (and the roots)
	repo string
	url  string
	env  adapters.Env
	// tracked: git tracks doc (Set committed it, Delete has not removed it)
	tracked bool
}

// newGitRepo makes base/name a repository on branch main with one commit
// (README) and core.autocrlf off. The repository is built with stock git
// once per test process (template) and copied for each fixture: the four
// git processes per fixture were a third of this package's git processes.
func newGitRepo(t *testing.T, base, name string) string {
	t.Helper()
	tmpl, err := gitTemplate.get()
	if err != nil {
		t.Fatalf("template repository: %v", err)
	}
	repo := filepath.Join(base, name)
	if err := testproc.CopyTree(tmpl, repo); err != nil {
		t.Fatal(err)
	}
	return repo
}

// gitTemplate is the repository newGitRepo copies, built on first use
// and removed by TestMain.
var gitTemplate templateRepo

type templateRepo struct {
	once sync.Once
	dir  string
	err  error
}

func (r *templateRepo) get() (string, error) {
	r.once.Do(func() { r.dir, r.err = r.build() })
	return r.dir, r.err
}

func (r *templateRepo) build() (string, error) {
	dir, err := os.MkdirTemp("", "adapters-git-template")
	if err != nil {
		return "", err
	}
	repo := filepath.Join(dir, "repo")
	if err := os.MkdirAll(repo, 0o755); err != nil {
		return dir, err
	}
	if err := os.WriteFile(filepath.Join(repo, "README"), []byte("fixture\n"), 0o644); err != nil {
		return dir, err
	}
	for _, args := range [][]string{
		{"init", "-q", "-b", "main"},
		{"config", "core.autocrlf", "false"},
		{"add", "README"},
		{"commit", "-q", "-m", "init"},
	} {
		cmd := exec.Command("git", args...)
		cmd.Dir = repo
		cmd.Env = gitEnv(repo)
		if out, err := cmd.CombinedOutput(); err != nil {
			return dir, fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
		}
	}
	r.dir = repo
	return repo, nil
}

// remove deletes the template (TestMain calls it after the tests).
func (r *templateRepo) remove() {
	if r.dir != "" {
		os.RemoveAll(filepath.Dir(r.dir))
	}
}

// Set writes doc and commits it: `git add` and `git commit` the first
// time, one `git commit -- doc` once git tracks it.
func (f *gitFixture) Set(t *testing.T, content []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(f.repo, "doc"), content, 0o644); err != nil {
		t.Fatal(err)
	}
	if !f.tracked {
		runGit(t, f.repo, "add", "doc")
		runGit(t, f.repo, "commit", "-q", "--allow-empty", "-m", "set doc")
		f.tracked = true
		return
	}
	runGit(t, f.repo, "commit", "-q", "--allow-empty", "-m", "set doc", "--", "doc")
}

// Delete removes doc and commits the removal in one git process.
func (f *gitFixture) Delete(t *testing.T) {
	t.Helper()
	if !f.tracked {
		runGit(t, f.repo, "rm", "-q", "doc") // fails as before: git does not know doc
	}
	if err := os.Remove(filepath.Join(f.repo, "doc")); err != nil {
		t.Fatal(err)
	}
	runGit(t, f.repo, "commit", "-q", "-m", "delete doc", "--", "doc")
	f.tracked = false
}

func (f *gitFixture) Source(t *testing.T, maxBytes int64) adapters.Source {
	env := f.env
	env.MaxBytes = maxBytes
	return mustOpen(t, adapters.Spec{Type: "git", URL: f.url, Ref: "main", Path: "doc"}, env)
}

// startGitDaemon serves base over git:// on 127.0.0.1, or skips the test.
func startGitDaemon(t *testing.T, base string) int {
	t.Helper()
	// git-daemon in git's exec path (`git daemon --help` answered that
	// by starting man and col, each time)
	if _, err := os.Stat(filepath.Join(gitExecPath(t), "git-daemon")); err != nil {
		t.Skipf("git daemon unavailable: %v", err)
	}
	port := freePort(t)
	cmd := exec.Command("git", "daemon", "--verbose", "--export-all", "--base-path="+base, "--listen=127.0.0.1",
		"--port="+strconv.Itoa(port), "--reuseaddr", "--informative-errors", base)
	cmd.Env = gitEnv(base)
	// `git daemon` runs git-daemon as its child: start it in a process
	// group of its own and end the whole group, or the daemon outlives
	// the test (TestMain checks that none does).
	testproc.OwnGroup(cmd)
	done, err := testproc.StartGitDaemon(cmd, 10*time.Second)
	if err != nil {
		t.Fatalf("git daemon on port %d: %v", port, err)
	}
	t.Cleanup(func() {
		testproc.KillGroup(cmd)
		<-done
	})
	return port
}

// gitExecPath returns `git --exec-path`, asked once per test process, or
// skips the test when git cannot say.
func gitExecPath(t *testing.T) string {
	t.Helper()
	dir, err := execPath()
	if err != nil {
		t.Skipf("git --exec-path: %v", err)
	}
	return dir
}

var execPath = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("git", "--exec-path").Output()
	return strings.TrimSpace(string(out)), err
})

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// startGitHTTP serves base over smart HTTP with git http-backend, or skips.
func startGitHTTP(t *testing.T, base string) *httptest.Server {
	t.Helper()
	backend := filepath.Join(gitExecPath(t), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend unavailable: %v", err)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + base}, Stderr: io.Discard}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
