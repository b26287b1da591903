package share

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/manifest"
)

// contentHash is the content hash a record gives of b.
func contentHash(b []byte) string { return store.ContentHash(b) }

func TestMain(m *testing.M) {
	// The pre-receive hook of a remote from InitRemote in these tests runs
	// this test binary as `hook pre-receive`.
	if len(os.Args) == 3 && os.Args[1] == "hook" && os.Args[2] == "pre-receive" {
		dir := os.Getenv("GIT_DIR")
		if dir == "" {
			dir = "."
		}
		if err := Guard(context.Background(), dir, os.Stdin); err != nil {
			fmt.Fprintf(os.Stderr, "readproof guard: %v\n", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Hermetic git: no system or user configuration, no prompts.
	os.Setenv("GIT_CONFIG_NOSYSTEM", "1")
	os.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	os.Setenv("GIT_TERMINAL_PROMPT", "0")
	os.Setenv("GIT_AUTHOR_NAME", "test")
	os.Setenv("GIT_AUTHOR_EMAIL", "test@example.invalid")
	os.Setenv("GIT_COMMITTER_NAME", "test")
	os.Setenv("GIT_COMMITTER_EMAIL", "test@example.invalid")
	// The tests here mostly wait on git subprocesses and servers, so run
	// more of them at once than there are CPUs (an explicit -parallel wins).
	if n := 2 * runtime.GOMAXPROCS(0); n > 4 {
		flag.Set("test.parallel", strconv.Itoa(n))
	} else {
		flag.Set("test.parallel", "4")
	}
	code := testproc.Run(m)
	bareTemplate.remove()
	os.Exit(code)
}

func needGit(t testing.TB) {
	t.Helper()
	gitstore.GitCommand(t, "", "version") // skips the test without git; found once per PATH
}

// project is a directory with readproof.toml, documents under docs/ and a
// store at .readproof.
type project struct {
	dir string
	s   *store.Store
	now time.Time
}

// newProject declares one filesystem resource readproof://demo/NAME per
// document docs/NAME.md and creates the store.
func newProject(t testing.TB, docs map[string]string) *project {
	t.Helper()
	needGit(t)
	dir := t.TempDir()
	var toml strings.Builder
	toml.WriteString("version = 1\n[defaults]\nmax_bytes = \"256MiB\"\n\n")
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		writeFile(t, filepath.Join(dir, "docs", n+".md"), docs[n])
		fmt.Fprintf(&toml, "[[resource]]\nuri = \"readproof://demo/%s\"\nsource = { type = \"filesystem\", path = \"docs/%s.md\" }\n\n", n, n)
	}
	writeFile(t, filepath.Join(dir, "readproof.toml"), toml.String())
	if err := store.Init(filepath.Join(dir, ".readproof")); err != nil {
		t.Fatal(err)
	}
	p := &project{dir: dir, now: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)}
	p.open(t)
	return p
}

func (p *project) open(t testing.TB) {
	t.Helper()
	if p.s != nil {
		p.s.Close()
	}
	pol, err := policy.Load(filepath.Join(p.dir, "readproof.toml"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := store.Open(filepath.Join(p.dir, ".readproof"), pol, store.Options{Now: p.clock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	p.s = s
}

// copyProject copies p (documents, readproof.toml and store) to a fresh
// directory and opens the copy, with the same clock. In the copy's store
// config, the one remote URL fromURL becomes toURL (the config file is the
// only file of a project that names a path or URL). A fixture several
// subtests start from is built once, with readproof's push and pull, and
// copied: building it again ran the same git processes each time.
func (p *project) copyProject(t testing.TB, fromURL, toURL string) *project {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "project")
	if err := testproc.CopyTree(p.dir, dir); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, ".readproof", "config")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	line := "\turl = " + fromURL + "\n"
	if n := strings.Count(string(data), line); n != 1 {
		t.Fatalf("copy of %s: %d remotes with URL %s, want one:\n%s", p.dir, n, fromURL, data)
	}
	if err := os.WriteFile(cfg, []byte(strings.Replace(string(data), line, "\turl = "+toURL+"\n", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	q := &project{dir: dir, now: p.now}
	q.open(t)
	return q
}

// clock advances one second per call, so every event has its own time.
func (p *project) clock() time.Time {
	p.now = p.now.Add(time.Second)
	return p.now
}

func (p *project) path() string { return filepath.Join(p.dir, ".readproof") }

func (p *project) write(t testing.TB, name, body string) {
	t.Helper()
	writeFile(t, filepath.Join(p.dir, "docs", name+".md"), body)
}

func (p *project) run(t testing.TB, id string, docs ...string) *manifest.Manifest {
	t.Helper()
	var uris []string
	for _, d := range docs {
		uris = append(uris, "readproof://demo/"+d)
	}
	m, _, err := p.s.RunOnce(context.Background(), id, uris)
	if err != nil {
		t.Fatalf("run %s: %v", id, err)
	}
	return m
}

func (p *project) tag(t testing.TB, doc, tag string) *store.TagState {
	t.Helper()
	st, err := p.s.SetTag(uri(t, doc), tag, "")
	if err != nil {
		t.Fatalf("tag %s@%s: %v", doc, tag, err)
	}
	return st
}

func uri(t testing.TB, doc string) identity.URI {
	t.Helper()
	u, err := identity.ParseURI("readproof://demo/" + doc)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func writeFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// runs returns run id -> manifest id of committed runs.
func runs(t testing.TB, s *store.Store) map[string]string {
	t.Helper()
	list, err := s.Runs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, r := range list {
		if !r.Open {
			out[r.RunID] = r.Manifest
		}
	}
	return out
}

// replayAll replays every committed run and fails on any mismatch.
func replayAll(t testing.TB, s *store.Store) {
	t.Helper()
	for id := range runs(t, s) {
		res, err := s.Replay(id)
		if err != nil {
			t.Fatalf("replay %s in %s: %v", id, s.Path(), err)
		}
		if !res.AllMatch {
			t.Fatalf("replay %s in %s: not all entries match", id, s.Path())
		}
	}
}

// git runs stock git on gitDir ("" for none) and returns its trimmed output.
func git(t testing.TB, gitDir string, args ...string) string {
	t.Helper()
	out, err := gitstore.GitCommand(t, gitDir, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

// allRefs lists every ref of a repository as "name oid" lines, sorted by
// name, as `git for-each-ref --format='%(refname) %(objectname)'` does
// (gitAllRefs; TestAllRefsSameAsGit compares the two). It reads the files
// itself: the tests take it before and after each refused operation, and
// that was a git process each time.
func allRefs(t testing.TB, gitDir string) string {
	t.Helper()
	refs := map[string]string{}
	if data, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		for _, line := range strings.Split(string(data), "\n") {
			if oid, name, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
				refs[name] = oid
			}
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	symbolic := map[string]string{}
	err := filepath.WalkDir(filepath.Join(gitDir, "refs"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(path, ".lock") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(gitDir, path)
		name, value := filepath.ToSlash(rel), strings.TrimSpace(string(data))
		if target, ok := strings.CutPrefix(value, "ref: "); ok {
			symbolic[name] = target
		} else {
			refs[name] = value
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, target := range symbolic {
		for i := 0; i < 5 && refs[target] == ""; i++ {
			target = symbolic[target]
		}
		if oid := refs[target]; oid != "" {
			refs[name] = oid
		}
	}
	names := make([]string, 0, len(refs))
	for name, oid := range refs {
		if len(oid) != 40 && len(oid) != 64 {
			t.Fatalf("%s: ref %s holds %q", gitDir, name, oid)
		}
		names = append(names, name)
	}
	sort.Strings(names)
	var b strings.Builder
	for i, name := range names {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(name + " " + refs[name])
	}
	return b.String()
}

// gitAllRefs is allRefs by stock git.
func gitAllRefs(t testing.TB, gitDir string) string {
	t.Helper()
	return git(t, gitDir, "for-each-ref", "--format=%(refname) %(objectname)")
}

// refsExcept lists every ref except those under prefix.
func refsExcept(t testing.TB, gitDir, prefix string) string {
	t.Helper()
	var keep []string
	for _, l := range strings.Split(allRefs(t, gitDir), "\n") {
		if !strings.HasPrefix(l, prefix) {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}

// fromMain returns every commit reachable from main, listed by one git
// rev-list: the same answer as reachableFromMain for each of them.
func fromMain(t testing.TB, gitDir string) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, c := range strings.Fields(git(t, gitDir, "rev-list", "refs/heads/main")) {
		set[c] = true
	}
	return set
}

// reachableFromMain reports whether commit c is reachable from main.
func reachableFromMain(t testing.TB, gitDir, c string) bool {
	t.Helper()
	err := gitstore.GitCommand(t, gitDir, "merge-base", "--is-ancestor", c, "refs/heads/main").Run()
	return err == nil
}

// ---- servers ----

// bareServer creates an empty bare repository name under base: a copy of
// one that stock git initialised once per test process (git init and git
// config were two processes per server). It accepts pushes over HTTP, and
// receive-pack does not start `git gc --auto` after each push (a process
// per push that found nothing to do on these small repositories; no test
// here is about the server's housekeeping).
func bareServer(t testing.TB, base, name string) string {
	t.Helper()
	needGit(t)
	tmpl, err := bareTemplate.get(t)
	if err != nil {
		t.Fatalf("template server repository: %v", err)
	}
	dir := filepath.Join(base, name)
	if err := testproc.CopyTree(tmpl, dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// bareTemplate is the repository bareServer copies, made on first use in
// the test process's TMPDIR (testproc.Run removes it when that is its
// scratch directory; TestMain removes it otherwise).
var bareTemplate templateRepo

type templateRepo struct {
	once sync.Once
	dir  string
	err  error
}

func (r *templateRepo) get(t testing.TB) (string, error) {
	r.once.Do(func() {
		var top string
		if top, r.err = os.MkdirTemp("", "share-bare-template"); r.err != nil {
			return
		}
		r.dir = filepath.Join(top, "server.git")
		for _, args := range [][]string{
			{"init", "--quiet", "--bare", "--initial-branch=main", r.dir},
			{"--git-dir=" + r.dir, "config", "http.receivepack", "true"},
			{"--git-dir=" + r.dir, "config", "receive.autogc", "false"},
		} {
			if out, err := gitstore.GitCommand(t, "", args...).CombinedOutput(); err != nil {
				r.err = fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, out)
				return
			}
		}
	})
	return r.dir, r.err
}

func (r *templateRepo) remove() {
	if r.dir != "" {
		os.RemoveAll(filepath.Dir(r.dir))
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// daemon is a git daemon serving base on 127.0.0.1, reached through a
// testproc.Front on port: each connection straight to git daemon waited
// 40 ms for a delayed acknowledgement (testproc.Front says why).
type daemon struct {
	base string
	port int
	d    *testproc.Daemon
}

// startDaemon starts `git daemon --enable=receive-pack` on a free port in
// its own process group, and its front on another, and waits until the
// daemon answers.
func startDaemon(t testing.TB, base string) *daemon {
	t.Helper()
	needGit(t)
	started, err := testproc.StartFrontedDaemonOnFreePort(func(port int) *exec.Cmd {
		return gitstore.GitCommand(t, "", "daemon", "--verbose", "--reuseaddr", "--base-path="+base, "--export-all",
			"--enable=receive-pack", "--listen=127.0.0.1", fmt.Sprintf("--port=%d", port), base)
	})
	if err != nil {
		t.Fatal(err)
	}
	d := &daemon{base: base, port: started.Port(), d: started}
	t.Cleanup(d.kill)
	return d
}

// kill ends the daemon and every process it started (the whole group),
// and its front: a client is refused from then on.
func (d *daemon) kill() { d.d.Close() }

func (d *daemon) url(name string) string { return fmt.Sprintf("git://127.0.0.1:%d/%s", d.port, name) }

// startHTTP serves base over git's smart HTTP protocol through
// git-http-backend (CGI) on 127.0.0.1.
func startHTTP(t testing.TB, base string) string {
	t.Helper()
	needGit(t)
	execPath := git(t, "", "--exec-path")
	backend := filepath.Join(execPath, "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git-http-backend not found: %v", err)
	}
	h := &cgi.Handler{
		Path: backend,
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=" + os.DevNull},
		InheritEnv: []string{"PATH"},
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// killingProxy forwards TCP connections to a daemon and kills the daemon's
// whole process group once more than limit bytes went from client to
// server (or, with downLimit set, more than downLimit bytes from server to
// client, over all connections): a server killed mid-transfer.
type killingProxy struct {
	l         net.Listener
	limit     int64
	downLimit int64
	received  atomic.Int64
	d         *daemon
	killed    atomic.Bool
	wg        sync.WaitGroup
}

func startKillingProxy(t testing.TB, d *daemon, limit int64) *killingProxy {
	t.Helper()
	return startKillingProxyDown(t, d, limit, 0)
}

// startKillingProxyDown is startKillingProxy with downLimit set before any
// connection is served.
func startKillingProxyDown(t testing.TB, d *daemon, limit, downLimit int64) *killingProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &killingProxy{l: l, limit: limit, downLimit: downLimit, d: d}
	t.Cleanup(func() { l.Close(); p.wg.Wait() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			p.wg.Add(1)
			go p.serve(c)
		}
	}()
	return p
}

func (p *killingProxy) url(name string) string {
	return fmt.Sprintf("git://%s/%s", p.l.Addr().String(), name)
}

func (p *killingProxy) serve(c net.Conn) {
	defer p.wg.Done()
	defer c.Close()
	up, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", p.d.port))
	if err != nil {
		return
	}
	defer up.Close()
	back := make(chan struct{})
	go func() {
		defer close(back)
		// The server's side ended (done, or the daemon killed): the client
		// is told so, as a direct connection would tell it, so that it
		// ends too and the loop below reads its EOF. Before, a client
		// still waiting for the server (git's fetch) waited for good, and
		// so did the test's cleanup (wg.Wait).
		defer func() {
			if tc, ok := c.(*net.TCPConn); ok {
				tc.CloseWrite()
			}
		}()
		if p.downLimit == 0 {
			io.Copy(c, up)
			return
		}
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
				if p.received.Add(int64(n)) > p.downLimit && p.killed.CompareAndSwap(false, true) {
					p.d.kill()
					c.Close()
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	var sent int64
	for {
		testproc.QuickAck(c) // the client is git: testproc.Front says why
		n, err := c.Read(buf)
		if n > 0 {
			if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
			if sent > p.limit && p.killed.CompareAndSwap(false, true) {
				p.d.kill()
				return
			}
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				up.(*net.TCPConn).CloseWrite()
				<-back
			}
			return
		}
	}
}

// corruptLoose flips one byte of a loose object in place, keeping its name,
// as a disk error or an attacker would (testproc.DamageLoose).
func corruptLoose(t testing.TB, gitDir, oid string) {
	t.Helper()
	if err := testproc.DamageLoose(gitDir, oid); err != nil {
		t.Fatal(err)
	}
}

// runIDConflict makes two projects sharing a remote (origin) whose runs
// named x recorded different manifests: a pushed its run x (ma), and b,
// which recorded its own x (mb), pulled, so in b run x is mb and ma waits
// under x as a conflict. remote is origin's path.
func runIDConflict(t *testing.T) (remote string, a, b *project, ma, mb *manifest.Manifest) {
	t.Helper()
	remote = bareServer(t, t.TempDir(), "shared.git")
	a = newProject(t, map[string]string{"doc": "a\n"})
	b = newProject(t, map[string]string{"doc": "b\n"})
	ma = a.run(t, "x", "doc")
	mb = b.run(t, "x", "doc")
	addRemote(t, a, "origin", remote)
	addRemote(t, b, "origin", remote)
	mustPush(t, a, "origin")
	mustPull(t, b, "origin")
	return remote, a, b, ma, mb
}
