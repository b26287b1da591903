package gitstore

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
)

// packfileURIHTTP serves the repositories under root with git
// http-backend, adding "packfile-uris http" to each protocol v2 fetch
// request as packfileURIFront does for git://: upload-pack then answers
// with the URL its uploadpack.blobPackfileUri names, as a hostile remote
// may unasked. A request for a path ending in /uri.pack goes to pack
// (when not nil): a pack URL on the remote's own server.
func packfileURIHTTP(t *testing.T, root string, inject bool, pack http.Handler) string {
	t.Helper()
	out, err := exec.Command("git", "--exec-path").Output()
	if err != nil {
		t.Skip("git --exec-path failed")
	}
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		t.Skipf("git http-backend unavailable: %v", err)
	}
	h := &cgi.Handler{Path: backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}, Stderr: io.Discard, Logger: log.New(io.Discard, "", 0)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if pack != nil && strings.HasSuffix(r.URL.Path, "/uri.pack") {
			pack.ServeHTTP(w, r)
			return
		}
		if inject && r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/git-upload-pack") {
			var body io.Reader = r.Body
			if r.Header.Get("Content-Encoding") == "gzip" {
				zr, err := gzip.NewReader(r.Body)
				if err != nil {
					http.Error(w, err.Error(), http.StatusBadRequest)
					return
				}
				body = zr
				r.Header.Del("Content-Encoding")
			}
			b, err := io.ReadAll(body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if len(b) > 4 && bytes.HasPrefix(b[4:], []byte("command=fetch")) {
				if i := bytes.Index(b, []byte("0001")); i >= 0 {
					var add bytes.Buffer
					writePkt(&add, []byte("packfile-uris http\n"))
					b = append(b[:i+4:i+4], append(add.Bytes(), b[i+4:]...)...)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
			r.ContentLength = int64(len(b))
			r.Header.Set("Content-Length", strconv.Itoa(len(b)))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestFetchRefusesPackfileURIs: a protocol v2 remote may answer a fetch
// with the URL of a pack, which git 2.39 downloads (git http-fetch)
// whether or not it asked, wherever the URL points: a remote could make
// the machine that pulls contact any address it reaches (a cloud's
// metadata address, a service inside a CI runner's network). Stock git
// daemon and git http-backend, each made to offer such a URL on
// 127.0.0.1 (an httptest server standing for the inner address), are
// refused for each of a transport's fetches, by URL and by a remote's
// name: ErrPackfileURI naming the URL's host, and that server receives
// no request at all. From the same repositories without the offer, each
// fetch works.
// packURIOffer makes the repository up whose upload-pack names, for its
// blobURIPack writes a pack holding only the blob noise.bin at the tip
// of up's main, as a remote offers by uploadpack.blobPackfileUri: blob
// is the blob's name, hash the pack's and pack its bytes.
func blobURIPack(t *testing.T, up string) (blob, hash string, pack []byte) {
	t.Helper()
	blob = mirrorGit(t, up, "rev-parse", "main:noise.bin")
	git, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	docs := t.TempDir()
	cmd := exec.Command(git, "pack-objects", filepath.Join(docs, "uri"))
	cmd.Dir = up
	cmd.Env = append(gitEnv(), "HOME="+up)
	cmd.Stdin = strings.NewReader(blob + "\n")
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	hash = strings.TrimSpace(string(out))
	pack, err = os.ReadFile(filepath.Join(docs, "uri-"+hash+".pack"))
	if err != nil {
		t.Fatal(err)
	}
	return blob, hash, pack
}

// one large blob, a pack at the URL of an httptest server on 127.0.0.1
// (written "localhost", so that an error naming it is told apart from one
// naming the remote, 127.0.0.1), standing for an address inside the
// network of the machine that pulls; asked counts the requests it
// receives; inner is its URL.
func packURIOffer(t *testing.T) (up, inner string, asked *atomic.Int64) {
	up = manyBlobs(t, 1, 32<<10)
	blob, hash, pack := blobURIPack(t, up)
	asked = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		w.Write(pack)
	}))
	t.Cleanup(srv.Close)
	inner = strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	mirrorGit(t, up, "config", "uploadpack.blobPackfileUri", blob+" "+hash+" "+inner+"/uri.pack")
	mirrorGit(t, up, "config", "uploadpack.allowSidebandAll", "true")
	return up, inner, asked
}

func TestFetchRefusesPackfileURIs(t *testing.T) {
	t.Parallel()
	up, _, asked := packURIOffer(t)
	root := filepath.Dir(up)
	daemon := serveGitDaemon(t, root)
	remotes := map[string][2]string{ // kind: offering URL, plain URL
		"git":  {"git://" + packfileURIFront(t, daemon) + "/up", "git://" + daemon + "/up"},
		"http": {packfileURIHTTP(t, root, true, nil) + "/up/.git", packfileURIHTTP(t, root, false, nil) + "/up/.git"},
	}
	tip := OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	fetches := map[string]func(tr *Transport, remote string) error{
		"objects": func(tr *Transport, remote string) error {
			return tr.FetchObjects(context.Background(), remote, []OID{tip})
		},
		"refs": func(tr *Transport, remote string) error {
			return tr.Fetch(context.Background(), remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
		},
		"probe": func(tr *Transport, remote string) error {
			_, err := tr.ProbeCommitAt(context.Background(), remote, "refs/heads/main")
			return err
		},
	}
	for kind, urls := range remotes {
		for name, fetch := range fetches {
			for _, byName := range []bool{false, true} {
				if byName && name == "probe" {
					continue // ProbeCommitAt takes a URL
				}
				for i, offer := range []bool{true, false} {
					label := kind + "/" + name
					if byName {
						label += "/name"
					}
					if !offer {
						label += "/plain"
					}
					t.Run(label, func(t *testing.T) {
						s := NewTestStore(t)
						tr, err := NewTransport(s.Path(), TransportOptions{})
						if err != nil {
							t.Fatal(err)
						}
						remote := urls[i]
						if byName {
							if err := tr.AddRemote(context.Background(), "up", remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"}); err != nil {
								t.Fatal(err)
							}
							remote = "up"
						}
						before := asked.Load()
						err = fetch(tr, remote)
						if n := asked.Load() - before; n != 0 {
							t.Errorf("the address the remote named received %d requests", n)
						}
						if !offer {
							if err != nil {
								t.Errorf("fetch from a remote that offers no pack URL: %v", err)
							}
							return
						}
						if !errors.Is(err, ErrPackfileURI) {
							t.Fatalf("fetch from a remote that answers with a pack URL: got %v, want ErrPackfileURI", err)
						}
						if !strings.Contains(err.Error(), "localhost") {
							t.Errorf("the error does not name the URL's host, localhost: %v", err)
						}
						if left := incomingFiles(s.Path(), nil); len(left) != 0 {
							t.Errorf("the refused fetch left %v", left)
						}
						if keeps, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.keep")); len(keeps) != 0 {
							t.Errorf("the refused fetch left %v, which would keep its pack from gc for ever", keeps)
						}
					})
				}
			}
		}
	}
}

// TestFetchRefusesPackfileURIsNoProxy: the user's no_proxy and NO_PROXY
// name the address the remote's pack URL points at, and the user's git
// configuration sends it no proxy (http.<url>.proxy empty): curl would go
// straight to such a host past any proxy git is given, so neither may
// open a way to it; a fetch from the remote itself, which neither names,
// works.
func TestFetchRefusesPackfileURIsNoProxy(t *testing.T) {
	up, inner, asked := packURIOffer(t)
	root := filepath.Dir(up)
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[http \""+inner+"\"]\n\tproxy =\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	t.Setenv("NO_PROXY", "localhost,127.0.0.1")
	t.Setenv("no_proxy", "localhost,127.0.0.1")
	fetchOfferThenPlain(t, asked, packfileURIHTTP(t, root, true, nil)+"/up/.git", packfileURIHTTP(t, root, false, nil)+"/up/.git")
}

// fetchOfferThenPlain fetches into a new store first from offering, a
// remote that answers with a pack URL, which must fail with
// ErrPackfileURI, then from plain, the same remote offering none, which
// must not fail; neither may send a request to the pack URL (asked).
func fetchOfferThenPlain(t *testing.T, asked *atomic.Int64, offering, plain string) {
	t.Helper()
	for i, url := range []string{offering, plain} {
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		err = tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
		if n := asked.Load(); n != 0 {
			t.Fatalf("the address the remote named received %d requests", n)
		}
		if offer := i == 0; offer && !errors.Is(err, ErrPackfileURI) {
			t.Errorf("fetch from a remote that answers with a pack URL: got %v, want ErrPackfileURI", err)
		} else if !offer && err != nil {
			t.Errorf("fetch from a remote that offers no pack URL: %v", err)
		}
	}
}

func TestNoProxyMatches(t *testing.T) {
	for _, c := range []struct {
		list, host string
		want       bool
	}{
		{"", "example.com", false},
		{"*", "example.com", true},
		{"example.com", "example.com", true},
		{"example.com", "git.example.com", true},
		{".example.com", "git.example.com", true},
		{"example.com", "badexample.com", false},
		{" other.org , Example.COM ", "example.com", true},
		{"10.0.0.0/8", "10.1.2.3", true},
		{"10.0.0.0/8", "11.1.2.3", false},
		{"169.254.169.254", "169.254.169.254", true},
		{"[::1]", "::1", true},
	} {
		if got := noProxyMatches(c.list, c.host); got != c.want {
			t.Errorf("noProxyMatches(%q, %q) = %v, want %v", c.list, c.host, got, c.want)
		}
	}
	for url, want := range map[string]string{
		"http://user@Host.example:8080/path?q": "Host.example",
		"https://[::1]:443/x":                  "::1",
		"http://10.0.0.1/x":                    "10.0.0.1",
	} {
		if got := urlHost(url); got != want {
			t.Errorf("urlHost(%q) = %q, want %q", url, got, want)
		}
	}
}

// TestFetchKeepsUsersProxy: the remote's own URL is fetched through the
// proxy the user's git would use for it, whether http_proxy or the
// configuration (http.<url>.proxy) names it, with the pack URLs of other
// addresses refused.
func TestFetchKeepsUsersProxy(t *testing.T) {
	up, _, _ := packURIOffer(t)
	remote := packfileURIHTTP(t, filepath.Dir(up), false, nil) + "/up/.git"
	var through atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		through.Add(1)
		r.Out.URL = r.In.URL // a proxy's request names the whole URL
	}})
	t.Cleanup(proxy.Close)
	for _, how := range []string{"env", "config"} {
		global := filepath.Join(t.TempDir(), "gitconfig")
		body := ""
		if how == "config" {
			body = "[http \"" + remote + "\"]\n\tproxy = " + proxy.URL + "\n"
			t.Setenv("http_proxy", "")
		} else {
			t.Setenv("http_proxy", proxy.URL)
		}
		if err := os.WriteFile(global, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GIT_CONFIG_GLOBAL", global)
		before := through.Load()
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Fetch(context.Background(), remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"}); err != nil {
			t.Errorf("%s: fetch through the user's proxy: %v", how, err)
		}
		if through.Load() == before {
			t.Errorf("%s: the fetch did not go through the user's proxy", how)
		}
	}
}

// TestFetchGuardOptions: which git fetch is guarded, and how, by the
// remote's kind.
func TestFetchGuardOptions(t *testing.T) {
	tr := &Transport{}
	for remote, want := range map[string]string{
		"git://example.com/s":           "protocol.https.allow=never",
		"/srv/store.git":                "protocol.https.allow=never",
		"host:store.git":                "protocol.https.allow=never",
		"codecommit::us-east-1://store": "protocol.ftps.allow=never",
	} {
		opts, env := tr.fetchGuard(context.Background(), remote)
		if got := opts[len(opts)-1]; got != want || len(env) != 0 {
			t.Errorf("fetchGuard(%q) = %q %q, want its last option %q and no environment", remote, opts, env, want)
		}
	}
	for args, want := range map[string]string{
		"-c a=b fetch --no-tags -- origin +refs/x:refs/y": "origin",
		"fetch --quiet -- git://h/s refs/probe":           "git://h/s",
		"ls-remote --symref -- origin":                    "",
		"config --get remote.fetch.url":                   "",
	} {
		got, ok := fetchRemote(strings.Fields(args))
		if got != want || ok != (want != "") {
			t.Errorf("fetchRemote(%q) = %q %v, want %q", args, got, ok, want)
		}
	}
}

// TestFetchRefusesPackfileURIsAllowProtocol: GIT_ALLOW_PROTOCOL, which a
// CI runner may set to restrict git's transports, decides over every
// protocol.<name>.allow setting in git; a list naming http and https
// must not let a git:// remote's pack URL through, and a fetch from the
// same remote offering none still works.
func TestFetchRefusesPackfileURIsAllowProtocol(t *testing.T) {
	up, _, asked := packURIOffer(t)
	daemon := serveGitDaemon(t, filepath.Dir(up))
	t.Setenv("GIT_ALLOW_PROTOCOL", "file:git:http:https")
	fetchOfferThenPlain(t, asked, "git://"+packfileURIFront(t, daemon)+"/up", "git://"+daemon+"/up")
}

// TestFetchGuardKeepsPasswordsOffArgv: a CI runner's git configuration
// often rewrites a host's URLs to ones holding an access token
// (url.https://x-access-token:TOKEN@host/.insteadOf https://host/); a
// remote fetched by its name is then not named in git's argv, which any
// user of the machine reads (ps), and the guard's per-URL proxy setting
// must not put the token there either (git's per-URL settings match a
// URL whatever its user and password when they name none); the fetch
// still goes through, with the token.
func TestFetchGuardKeepsPasswordsOffArgv(t *testing.T) {
	up, _, _ := packURIOffer(t)
	remote := packfileURIHTTP(t, filepath.Dir(up), false, nil) + "/up/.git"
	base := strings.TrimSuffix(remote, "/up/.git") + "/"
	for _, userinfo := range []string{"reader:s3cr3t-token@", "ghp_s3cr3t-token@"} {
		global := filepath.Join(t.TempDir(), "gitconfig")
		rule := "[url \"" + strings.Replace(base, "http://", "http://"+userinfo, 1) + "\"]\n\tinsteadOf = " + base + "\n"
		if err := os.WriteFile(global, []byte(rule), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Setenv("GIT_CONFIG_GLOBAL", global)
		git, err := findGit()
		if err != nil {
			t.Skip("git is not installed")
		}
		dir := t.TempDir()
		logf := filepath.Join(dir, "argv")
		wrapper := filepath.Join(dir, "git")
		if err := os.WriteFile(wrapper, []byte("#!/bin/sh\nprintf '%s\\n' \"$*\" >>'"+logf+"'\nexec '"+git+"' \"$@\"\n"), 0o700); err != nil {
			t.Fatal(err)
		}
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.AddRemote(context.Background(), "up", remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"}); err != nil {
			t.Fatal(err)
		}
		tr.git = wrapper
		if err := tr.Fetch(context.Background(), "up", []string{"+refs/heads/*:refs/readproof-remotes/up/*"}); err != nil {
			t.Fatalf("%s: fetch by name: %v", userinfo, err)
		}
		b, err := os.ReadFile(logf)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), ".proxy=READPROOF_GIT_REMOTE_PROXY") {
			t.Errorf("%s: no guarded fetch in git's argv (%q)", userinfo, b)
		}
		if strings.Contains(string(b), "s3cr3t") {
			t.Errorf("%s: git's argv holds the token:\n%s", userinfo, b)
		}
	}
}

func TestWithoutSecret(t *testing.T) {
	for _, c := range []struct {
		url   string
		token bool
		want  string
	}{
		{"https://h/a", true, "https://h/a"},
		{"https://u@h/a", true, "https://u@h/a"},
		{"https://u:p@h/a", true, "https://u@h/a"},
		{"https://u:p@h/a", false, "https://u@h/a"},
		{"https://ghp_0123456789abcdef@h/a", true, "https://h/a"},
		{"https://ghp_0123456789abcdef:x-oauth-basic@h:8443/a", true, "https://h:8443/a"},
		{"https://ghp_0123456789abcdef@h/a", false, "https://ghp_0123456789abcdef@h/a"},
		{"https://h/a@b", true, "https://h/a@b"},
		{"https://u:p@[::1]:8443/a", true, "https://u@[::1]:8443/a"},
		{"https://*.example.com", false, "https://*.example.com"},
	} {
		if got := withoutSecret(c.url, c.token); got != c.want {
			t.Errorf("withoutSecret(%q, %v) = %q, want %q", c.url, c.token, got, c.want)
		}
	}
}

// TestFetchKeepsUsersNoProxy: the guard empties no_proxy and NO_PROXY for
// git, so the remote's own URL must still go straight to the remote when
// the user's list names its host, as the user's git would send it, not
// through the proxy the user set for everything else.
func TestFetchKeepsUsersNoProxy(t *testing.T) {
	up, _, _ := packURIOffer(t)
	remote := packfileURIHTTP(t, filepath.Dir(up), false, nil) + "/up/.git"
	var through atomic.Int64
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		through.Add(1)
		r.Out.URL = r.In.URL
	}})
	t.Cleanup(proxy.Close)
	t.Setenv("http_proxy", proxy.URL)
	t.Setenv("GIT_CONFIG_GLOBAL", os.DevNull)
	for _, name := range []string{"no_proxy", "NO_PROXY"} {
		t.Setenv("no_proxy", "")
		os.Unsetenv("no_proxy")
		t.Setenv(name, "example.org, 127.0.0.1")
		s := NewTestStore(t)
		tr, err := NewTransport(s.Path(), TransportOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if err := tr.Fetch(context.Background(), remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"}); err != nil {
			t.Errorf("%s: fetch: %v", name, err)
		}
		if n := through.Load(); n != 0 {
			t.Errorf("%s names the remote's host, yet %d requests went through the proxy", name, n)
		}
	}
}

// TestFetchRefusesPackfileURIsEqualsKey: a proxy setting of the user's
// configuration for a URL holding an '=' (http."https://h/x=y".proxy,
// which `git -c` cannot name) is replaced by the refusing proxy like any
// other: a pack URL under it is not fetched straight.
func TestFetchRefusesPackfileURIsEqualsKey(t *testing.T) {
	up, inner, asked := packURIOffer(t)
	offer := strings.Fields(mirrorGit(t, up, "config", "uploadpack.blobPackfileUri"))
	mirrorGit(t, up, "config", "uploadpack.blobPackfileUri", offer[0]+" "+offer[1]+" "+inner+"/x=y/uri.pack")
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[http \""+inner+"/x=y\"]\n\tproxy =\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	url := packfileURIHTTP(t, filepath.Dir(up), true, nil) + "/up/.git"
	s := NewTestStore(t)
	tr, err := NewTransport(s.Path(), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Fetch(context.Background(), url, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
	if n := asked.Load(); n != 0 {
		t.Errorf("the address the remote named received %d requests", n)
	}
	if !errors.Is(err, ErrPackfileURI) {
		t.Errorf("got %v, want ErrPackfileURI", err)
	}
}

// TestFetchPackfileURIOwnServerFails: a pack URL on the remote's own
// server, which the guard lets git download, that fails there (404) is
// not reported as refused by readproof: the error would blame the guard
// for the remote's own failure.
func TestFetchPackfileURIOwnServerFails(t *testing.T) {
	up, _, _ := packURIOffer(t)
	remote := packfileURIHTTP(t, filepath.Dir(up), true, http.NotFoundHandler()) + "/up/.git"
	offer := strings.Fields(mirrorGit(t, up, "config", "uploadpack.blobPackfileUri"))
	mirrorGit(t, up, "config", "uploadpack.blobPackfileUri", offer[0]+" "+offer[1]+" "+remote+"/uri.pack")
	s := NewTestStore(t)
	tr, err := NewTransport(s.Path(), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	err = tr.Fetch(context.Background(), remote, []string{"+refs/heads/*:refs/readproof-remotes/up/*"})
	var ge *GitError
	if err == nil || errors.Is(err, ErrPackfileURI) || !errors.As(err, &ge) {
		t.Errorf("a pack URL on the remote's own server that answers 404: got %v, want git's error, not ErrPackfileURI", err)
	}
	if left := incomingFiles(s.Path(), nil); len(left) != 0 {
		t.Errorf("the failed fetch left %v", left)
	}
}
