package main

import (
	"fmt"
	"hash/crc32"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/rogpeppe/go-internal/testscript"
)

type scriptServer struct {
	srv      *httptest.Server
	requests atomic.Int64
	authOK   atomic.Int64
}

var scriptServers = map[string]*scriptServer{}

// httpServeCmd starts an HTTP source on 127.0.0.1 for the rest of the
// script: `httpserve NAME DIR`. GET /PATH serves DIR/PATH (404 when absent)
// with a CRC-32 ETag, or DIR/PATH.etag when present (304 to a matching
// If-None-Match); /status500 fails, /redirect/PATH redirects to /PATH.
// Sets $NAME_URL, and counts
// requests (and those whose Authorization is "Bearer $POLICY_TOKEN").
func httpServeCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: httpserve NAME DIR")
	}
	name, dir := args[0], ts.MkAbs(args[1])
	s := &scriptServer{}
	token := ts.Getenv("POLICY_TOKEN")
	s.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.requests.Add(1)
		if token != "" && r.Header.Get("Authorization") == "Bearer "+token {
			s.authOK.Add(1)
		}
		switch {
		case r.URL.Path == "/status500":
			http.Error(w, "upstream exploded", http.StatusInternalServerError)
			return
		case strings.HasPrefix(r.URL.Path, "/redirect/"):
			http.Redirect(w, r, strings.TrimPrefix(r.URL.Path, "/redirect"), http.StatusFound)
			return
		}
		data, err := os.ReadFile(dir + "/" + strings.TrimPrefix(r.URL.Path, "/"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%08x"`, crc32.ChecksumIEEE(data))
		if b, err := os.ReadFile(dir + "/" + strings.TrimPrefix(r.URL.Path, "/") + ".etag"); err == nil {
			etag = strings.TrimSuffix(string(b), "\n") // a hostile server's ETag, byte for byte
		}
		if r.Header.Get("If-None-Match") == etag {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", etag)
		w.Header().Set("Content-Type", "text/markdown")
		w.Write(data)
	}))
	ts.Defer(s.srv.Close)
	scriptServers[name] = s
	ts.Setenv(name+"_URL", s.srv.URL)
}

// httpCountCmd checks how many requests a server got: `httpcount NAME N
// [AUTHOK]`.
func httpCountCmd(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) < 2 {
		ts.Fatalf("usage: httpcount NAME N [AUTHOK]")
	}
	s := scriptServers[args[0]]
	if s == nil {
		ts.Fatalf("no server %s", args[0])
	}
	want, _ := strconv.Atoi(args[1])
	got := int(s.requests.Load())
	if (got == want) == neg {
		ts.Fatalf("server %s got %d requests, want %d", args[0], got, want)
	}
	if len(args) == 3 {
		wantAuth, _ := strconv.Atoi(args[2])
		if got := int(s.authOK.Load()); got != wantAuth {
			ts.Fatalf("server %s got %d requests with the expected Authorization, want %d", args[0], got, wantAuth)
		}
	}
}

// gitHTTPCmd serves the bare repositories under BASEDIR over git's smart
// HTTP protocol (git http-backend, receive-pack on) on 127.0.0.1, behind a
// handler that demands Basic authentication as USER:PASS (401 with a
// WWW-Authenticate challenge otherwise): `githttp NAME BASEDIR USER PASS`.
// Sets $NAME_ADDR (127.0.0.1:PORT).
func gitHTTPCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 4 {
		ts.Fatalf("usage: githttp NAME BASEDIR USER PASS")
	}
	name, base, user, pass := args[0], ts.MkAbs(args[1]), args[2], args[3]
	out, err := exec.Command("git", "--exec-path").Output()
	ts.Check(err)
	backend := filepath.Join(strings.TrimSpace(string(out)), "git-http-backend")
	if _, err := os.Stat(backend); err != nil {
		ts.Fatalf("git http-backend not found: %v", err)
	}
	h := &cgi.Handler{Path: backend, InheritEnv: []string{"PATH"},
		Env: []string{"GIT_PROJECT_ROOT=" + base, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + os.DevNull}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != pass {
			w.Header().Set("WWW-Authenticate", `Basic realm="runs"`)
			http.Error(w, "authentication required", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	ts.Defer(srv.Close)
	ts.Setenv(name+"_ADDR", strings.TrimPrefix(srv.URL, "http://"))
}
