package adapters_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

// recorder is a test server that counts requests and keeps their headers.
type recorder struct {
	srv     *httptest.Server
	n       atomic.Int32
	mu      sync.Mutex
	headers []http.Header
}

func newRecorder(t *testing.T, h http.HandlerFunc) *recorder {
	r := &recorder{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.n.Add(1)
		r.mu.Lock()
		r.headers = append(r.headers, req.Header.Clone())
		r.mu.Unlock()
		h(w, req)
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *recorder) port() string {
	_, p, _ := net.SplitHostPort(r.srv.Listener.Addr().String())
	return p
}

func ok(body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte(body)) }
}

func httpSpec(url string) adapters.Spec { return adapters.Spec{Type: "http", URL: url} }

func TestHTTPSSRFDirectLoopback(t *testing.T) {
	srv := newRecorder(t, ok("hello"))
	_, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{})
	wantRefused(t, err, adapters.RuleLoopback)
	if !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") || !strings.Contains(err.Error(), "allow_hosts or allow_cidrs") {
		t.Errorf("refusal %q does not explain itself", err)
	}
	if srv.n.Load() != 0 {
		t.Fatalf("the server received %d requests", srv.n.Load())
	}
	// Allowed by CIDR, and by host name.
	for _, p := range []adapters.NetPolicy{loopback, {AllowHosts: []string{"127.0.0.1"}}, {AllowHosts: []string{"127.0.0.1:" + srv.port()}}} {
		r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{Network: p})
		if err != nil || string(r.Content) != "hello" {
			t.Fatalf("policy %+v: %q, %v", p, r.Content, err)
		}
	}
	// An allow-list entry for another port does not count.
	_, err = fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{Network: adapters.NetPolicy{AllowHosts: []string{"127.0.0.1:1"}}})
	wantRefused(t, err, adapters.RuleLoopback)
}

func TestHTTPSSRFLiteralForms(t *testing.T) {
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"http://[fe80::1]/",
	} {
		_, err := fetchSpec(t, httpSpec(u), adapters.Env{})
		wantRefused(t, err, adapters.RuleLinkLocal)
	}
	refusals := map[string]string{
		"http://[::1]:8080/":              adapters.RuleLoopback,
		"http://[::ffff:127.0.0.1]:8080/": adapters.RuleLoopback,
		"http://10.1.2.3/":                adapters.RulePrivate,
		"http://192.168.0.1/":             adapters.RulePrivate,
		"http://172.16.5.4/":              adapters.RulePrivate,
		"http://100.64.0.1/":              adapters.RulePrivate,
		"http://[fd00:ec2::254]/":         adapters.RuleUniqueLocal,
		"http://0.0.0.0:80/":              adapters.RuleUnspecified,
		"http://[::]/":                    adapters.RuleUnspecified,
		"http://224.0.0.1/":               adapters.RuleMulticast,
		"http://[64:ff9b::7f00:1]/":       adapters.RuleLoopback,
	}
	for u, rule := range refusals {
		_, err := fetchSpec(t, httpSpec(u), adapters.Env{})
		wantRefused(t, err, rule)
	}
}

func TestHTTPSSRFNameResolvingToLoopback(t *testing.T) {
	srv := newRecorder(t, ok("via a name"))
	u := "http://localhost:" + srv.port() + "/doc"
	// "localhost" is this machine (RFC 6761), decided from the name as
	// written before anything is resolved or dialled.
	if err := adapters.Check(httpSpec(u), adapters.Env{}); err == nil {
		t.Fatalf("Check let localhost through")
	}
	_, err := fetchSpec(t, httpSpec(u), adapters.Env{})
	wantRefused(t, err, adapters.RuleLoopback)
	if !strings.Contains(err.Error(), "localhost is a loopback address") {
		t.Errorf("refusal %q does not name the host", err)
	}
	if srv.n.Load() != 0 {
		t.Fatalf("the server received %d requests", srv.n.Load())
	}
	r, err := fetchSpec(t, httpSpec(u), adapters.Env{Network: adapters.NetPolicy{AllowHosts: []string{"LOCALHOST"}}})
	if err != nil || string(r.Content) != "via a name" {
		t.Fatalf("allow-listed name: %q, %v", r.Content, err)
	}
	r, err = fetchSpec(t, httpSpec(u), adapters.Env{Network: loopback})
	if err != nil || string(r.Content) != "via a name" {
		t.Fatalf("allow-listed address: %q, %v", r.Content, err)
	}
}

func TestHTTPSSRFRedirectToLoopback(t *testing.T) {
	target := newRecorder(t, ok("internal"))
	hop := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://localhost:"+target.port()+"/admin", http.StatusFound)
	})
	// The first host is allowed by name; the redirect leads elsewhere.
	env := adapters.Env{Network: adapters.NetPolicy{AllowHosts: []string{"127.0.0.1"}}}
	_, err := fetchSpec(t, httpSpec(hop.srv.URL+"/doc"), env)
	wantRefused(t, err, adapters.RuleLoopback)
	if hop.n.Load() != 1 || target.n.Load() != 0 {
		t.Fatalf("requests: hop %d, target %d", hop.n.Load(), target.n.Load())
	}
	env.Network.AllowHosts = append(env.Network.AllowHosts, "localhost")
	r, err := fetchSpec(t, httpSpec(hop.srv.URL+"/doc"), env)
	if err != nil || string(r.Content) != "internal" {
		t.Fatalf("allow-listed redirect: %q, %v", r.Content, err)
	}
	if r.Provenance["final_url"] != "http://localhost:"+target.port()+"/admin" {
		t.Errorf("provenance %v lacks the final URL", r.Provenance)
	}

	// A redirect to a metadata address is refused at the redirect, before
	// any connection.
	meta := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/", http.StatusFound)
	})
	_, err = fetchSpec(t, httpSpec(meta.srv.URL+"/doc"), adapters.Env{Network: loopback})
	wantRefused(t, err, adapters.RuleLinkLocal)
}

func TestHTTPSchemes(t *testing.T) {
	for _, u := range []string{"file:///etc/passwd", "gopher://127.0.0.1:70/x", "ftp://example.com/x", "FILE:///etc/hosts"} {
		spec := httpSpec(u)
		// Refused whatever the network policy allows.
		env := adapters.Env{Network: adapters.NetPolicy{AllowHosts: []string{"127.0.0.1", ""}, AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("0.0.0.0/0")}}}
		_, err := fetchSpec(t, spec, env)
		wantRefused(t, err, adapters.RuleScheme)
		if err := adapters.Check(spec, env); !errors.Is(err, adapters.ErrRefused) {
			t.Errorf("Check(%s) = %v", u, err)
		}
	}
	// A redirect to file:// is refused too.
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	_, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{Network: loopback})
	wantRefused(t, err, adapters.RuleScheme)
}

const secretValue = "s3cr3t-POLICY-TOKEN-7f4e9a1c0b"

func secretEnv(p adapters.NetPolicy) adapters.Env {
	return adapters.Env{
		Network:  p,
		EnvAllow: []string{"POLICY_TOKEN"},
		LookupEnv: func(name string) (string, bool) {
			if name == "POLICY_TOKEN" {
				return secretValue, true
			}
			return "", false
		},
	}
}

// noSecret fails if the secret occurs anywhere in r or err.
func noSecret(t *testing.T, what string, r adapters.Result, err error) {
	t.Helper()
	dump := fmt.Sprintf("%q %q %q %q %q %v", r.Content, r.ContentType, r.Revision, r.ETag, r.LastModified, r.Provenance)
	if err != nil {
		dump += err.Error()
		for e := errors.Unwrap(err); e != nil; e = errors.Unwrap(e) {
			dump += e.Error()
		}
	}
	if strings.Contains(dump, secretValue) || strings.Contains(dump, secretValue[:12]) {
		t.Fatalf("%s: the secret leaked: %s", what, dump)
	}
}

func TestHTTPSecretHeader(t *testing.T) {
	t.Parallel()
	spec := func(url string) adapters.Spec {
		return adapters.Spec{Type: "http", URL: url, Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
	}
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte("policy text"))
		case "/echo":
			// A hostile server echoing the credential in its validators.
			w.Header().Set("ETag", `"`+r.Header.Get("Authorization")+`"`)
			w.Header().Set("Last-Modified", r.Header.Get("Authorization"))
			w.Header().Set("Content-Type", "text/plain; x="+strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer "))
			w.Write([]byte("echo"))
		case "/500":
			http.Error(w, "boom "+r.Header.Get("Authorization"), http.StatusInternalServerError)
		case "/404":
			http.NotFound(w, r)
		case "/big":
			w.Write([]byte(strings.Repeat("x", 100)))
		case "/stall":
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		case "/loop":
			http.Redirect(w, r, "/loop", http.StatusFound)
		}
	})
	env := secretEnv(loopback)

	r, err := fetchSpec(t, spec(srv.srv.URL+"/ok"), env)
	if err != nil || string(r.Content) != "policy text" {
		t.Fatalf("fetch: %q, %v", r.Content, err)
	}
	if got := srv.headers[0].Get("Authorization"); got != "Bearer "+secretValue {
		t.Fatalf("server received Authorization %q", got)
	}
	noSecret(t, "success", r, err)

	r, err = fetchSpec(t, spec(srv.srv.URL+"/echo"), env)
	if err != nil {
		t.Fatal(err)
	}
	noSecret(t, "echoing server", r, err)
	if !strings.Contains(r.ETag, adapters.Redacted) {
		t.Errorf("echoed ETag %q not scrubbed", r.ETag)
	}

	for _, path := range []string{"/500", "/404", "/big", "/loop"} {
		e := env
		e.MaxBytes = 10
		r, err := fetchSpec(t, spec(srv.srv.URL+path), e)
		if err == nil {
			t.Fatalf("%s: no error", path)
		}
		noSecret(t, path, r, err)
	}
	e := env
	e.Network.Timeout = 200 * time.Millisecond
	r, err = fetchSpec(t, spec(srv.srv.URL+"/stall"), e)
	if err == nil {
		t.Fatal("stall: no error")
	}
	noSecret(t, "timeout", r, err)

	// The stored definition keeps the reference; the redacted one hides even
	// that.
	s := spec(srv.srv.URL + "/ok")
	if s.Headers["Authorization"] != "Bearer ${POLICY_TOKEN}" || s.Redacted().Headers["Authorization"] != adapters.Redacted {
		t.Errorf("definition %v, redacted %v", s.Headers, s.Redacted().Headers)
	}
}

func TestHTTPSecretNotAllowListed(t *testing.T) {
	srv := newRecorder(t, ok("x"))
	spec := adapters.Spec{Type: "http", URL: srv.srv.URL + "/doc", Headers: map[string]string{"X-Api-Key": "${AWS_SECRET_ACCESS_KEY}"}}
	env := secretEnv(loopback)
	env.LookupEnv = func(string) (string, bool) { return secretValue, true }
	r, err := fetchSpec(t, spec, env)
	wantRefused(t, err, adapters.RuleEnvAllow)
	if !strings.Contains(err.Error(), "AWS_SECRET_ACCESS_KEY") || !strings.Contains(err.Error(), "[sources] env") {
		t.Errorf("refusal %q does not name the variable and the fix", err)
	}
	noSecret(t, "not allowed", r, err)
	if err := adapters.Check(spec, env); !errors.Is(err, adapters.ErrRefused) {
		t.Errorf("Check: %v", err)
	}
	if srv.n.Load() != 0 {
		t.Fatalf("the server received %d requests", srv.n.Load())
	}

	// An allowed but unset variable: an error naming it, no request.
	env = secretEnv(loopback)
	env.EnvAllow = []string{"POLICY_TOKEN", "UNSET_TOKEN"}
	spec.Headers = map[string]string{"Authorization": "Bearer ${UNSET_TOKEN}"}
	_, err = fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), "UNSET_TOKEN") || !strings.Contains(err.Error(), uri) {
		t.Errorf("unset variable: %v", err)
	}
	if srv.n.Load() != 0 {
		t.Fatalf("the server received %d requests", srv.n.Load())
	}

	// A value with a newline would split the header: refused without
	// quoting it.
	env.LookupEnv = func(string) (string, bool) { return secretValue + "\r\nX-Evil: 1", true }
	spec.Headers = map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}
	r, err = fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrConfig) {
		t.Errorf("newline in value: %v", err)
	}
	noSecret(t, "newline", r, err)
	if srv.n.Load() != 0 {
		t.Fatalf("the server received %d requests", srv.n.Load())
	}
}

func TestHTTPSecretDroppedOnCrossOriginRedirect(t *testing.T) {
	other := newRecorder(t, ok("moved"))
	first := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			http.Redirect(w, r, "/final", http.StatusFound)
			return
		}
		if r.URL.Path == "/final" {
			w.Write([]byte("same origin"))
			return
		}
		http.Redirect(w, r, other.srv.URL+"/doc", http.StatusFound)
	})
	spec := adapters.Spec{Type: "http", URL: first.srv.URL + "/doc", Headers: map[string]string{"X-Api-Key": "${POLICY_TOKEN}", "X-Trace": "plain"}}
	r, err := fetchSpec(t, spec, secretEnv(loopback))
	if err != nil || string(r.Content) != "moved" {
		t.Fatalf("%q, %v", r.Content, err)
	}
	if got := first.headers[0].Get("X-Api-Key"); got != secretValue {
		t.Fatalf("first server received %q", got)
	}
	if got := other.headers[0].Get("X-Api-Key"); got != "" {
		t.Fatalf("the other origin received the secret header %q", got)
	}
	if got := other.headers[0].Get("X-Trace"); got != "plain" {
		t.Errorf("plain header dropped: %q", got)
	}
	// Within one origin the header follows.
	spec.URL = first.srv.URL + "/same"
	if _, err := fetchSpec(t, spec, secretEnv(loopback)); err != nil {
		t.Fatal(err)
	}
	if got := first.headers[len(first.headers)-1].Get("X-Api-Key"); got != secretValue {
		t.Errorf("same-origin redirect lost the header: %q", got)
	}
}

func TestHTTPFailures(t *testing.T) {
	t.Parallel()
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/404":
			http.NotFound(w, r)
		case "/410":
			w.WriteHeader(http.StatusGone)
		case "/500":
			w.WriteHeader(http.StatusInternalServerError)
		case "/403":
			w.WriteHeader(http.StatusForbidden)
		case "/206":
			w.WriteHeader(http.StatusPartialContent)
		case "/big-declared":
			w.Header().Set("Content-Length", "1000000")
			w.Write([]byte(strings.Repeat("x", 1000)))
		case "/big-streamed":
			f := w.(http.Flusher)
			for i := 0; i < 64; i++ {
				w.Write([]byte(strings.Repeat("y", 1024)))
				f.Flush()
			}
		case "/stall":
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		case "/stall-body":
			w.Header().Set("Content-Length", "100")
			w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			select {
			case <-stall:
			case <-r.Context().Done():
			}
		case "/loop-a":
			http.Redirect(w, r, "/loop-b", http.StatusFound)
		case "/loop-b":
			http.Redirect(w, r, "/loop-a", http.StatusFound)
		default:
			if n, err := strconv.Atoi(strings.TrimPrefix(r.URL.Path, "/hop")); err == nil {
				http.Redirect(w, r, "/hop"+strconv.Itoa(n+1), http.StatusFound)
				return
			}
			w.WriteHeader(http.StatusTeapot)
		}
	})
	base := srv.srv.URL
	env := adapters.Env{Network: loopback, MaxBytes: 10 << 10}
	cases := []struct {
		path   string
		kind   error
		phrase string
	}{
		{"/404", adapters.ErrNotFound, "404 Not Found"},
		{"/410", adapters.ErrNotFound, "410 Gone"},
		{"/500", nil, "500 Internal Server Error"},
		{"/403", nil, "403 Forbidden"},
		{"/206", nil, "206 Partial Content"},
		{"/big-declared", adapters.ErrTooLarge, "Content-Length"},
		{"/big-streamed", adapters.ErrTooLarge, "max_bytes"},
		{"/loop-a", nil, "redirect loop: " + base + "/loop-a -> " + base + "/loop-b -> " + base + "/loop-a"},
		{"/hop0", nil, "stopped after 5 redirects"},
	}
	for _, c := range cases {
		r, err := fetchSpec(t, httpSpec(base+c.path), env)
		if err == nil {
			t.Errorf("%s: no error", c.path)
			continue
		}
		if c.kind != nil && !errors.Is(err, c.kind) {
			t.Errorf("%s: %q does not match %v", c.path, err, c.kind)
		}
		if !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), c.phrase) {
			t.Errorf("%s: %q lacks the resource or %q", c.path, err, c.phrase)
		}
		if len(r.Content) != 0 {
			t.Errorf("%s: failed fetch returned content", c.path)
		}
	}

	// Timeouts: no headers, and headers then a stalled body.
	for _, path := range []string{"/stall", "/stall-body"} {
		e := env
		e.Network.Timeout = 200 * time.Millisecond
		start := time.Now()
		_, err := fetchSpec(t, httpSpec(base+path), e)
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "within 200ms") || !strings.Contains(err.Error(), "[network] timeout") {
			t.Errorf("%s: %v", path, err)
		}
		// A timeout test: the fetch ended because of the timeout (the
		// error says so); the wall bound, 150 times the timeout, is for
		// loaded machines (the server stalls until the test ends).
		if d := time.Since(start); d > 30*time.Second {
			t.Errorf("%s: timed out after %s", path, d)
		}
	}

	// Unreachable: a closed port.
	_, err := fetchSpec(t, httpSpec("http://127.0.0.1:"+strconv.Itoa(freePort(t))+"/doc"), env)
	if err == nil || !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), "connection refused") || errors.Is(err, adapters.ErrRefused) {
		t.Errorf("closed port: %v", err)
	}

	// Malformed URLs: configuration errors, from Check and from Fetch.
	for _, u := range []string{"http://exa mple.com/", "://nohost", "http:///path-only", "relative/path", "http://[::1/"} {
		if err := adapters.Check(httpSpec(u), env); !errors.Is(err, adapters.ErrConfig) {
			t.Errorf("Check(%q) = %v", u, err)
		}
		_, err := fetchSpec(t, httpSpec(u), env)
		if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), uri) {
			t.Errorf("Fetch(%q) = %v", u, err)
		}
	}
	// A malformed URL with user information does not print it.
	_, err = fetchSpec(t, httpSpec("http://user:hunter2@exa mple.com/"), env)
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("malformed URL with a password: %v", err)
	}
}

func TestHTTPCancelInFlight(t *testing.T) {
	stall := make(chan struct{})
	t.Cleanup(func() { close(stall) })
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-stall:
		case <-r.Context().Done():
		}
	})
	src := mustOpen(t, httpSpec(srv.srv.URL+"/doc"), adapters.Env{Network: loopback})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := src.Fetch(ctx, adapters.Request{URI: uri})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), uri) {
		t.Fatalf("cancelled fetch: %v", err)
	}
	// A cancellation test: the fetch ended because of the cancel (the
	// error says so); the wall bound is wide, for loaded machines (the
	// server stalls until the test ends).
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("cancel took %s", d)
	}
}

func TestHTTPContentTypeAndValidators(t *testing.T) {
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc.md":
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		case "/data":
			w.Header().Set("Content-Type", "application/json")
		case "/304":
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `W/"v1"`)
		w.Header().Set("Last-Modified", "Wed, 01 Jan 2026 00:00:00 GMT")
		w.Write([]byte(`{"a":1}`))
	})
	env := adapters.Env{Network: loopback}
	r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc.md"), env)
	if err != nil || r.ContentType != "text/markdown" {
		t.Errorf("text/plain .md: %q, %v", r.ContentType, err)
	}
	r, err = fetchSpec(t, httpSpec(srv.srv.URL+"/data"), env)
	if err != nil || r.ContentType != "application/json" || r.Revision != `W/"v1"` || r.ETag != `W/"v1"` || r.LastModified == "" {
		t.Errorf("json: %+v, %v", r, err)
	}
	if r.Provenance["etag"] != `W/"v1"` || r.Provenance["status"] != "200" || r.Provenance["source_type"] != "http" {
		t.Errorf("provenance %v", r.Provenance)
	}
	// A 304 to an unconditional request is an error, not an empty document.
	_, err = fetchSpec(t, httpSpec(srv.srv.URL+"/304"), env)
	if err == nil || !strings.Contains(err.Error(), "304") {
		t.Errorf("unconditional 304: %v", err)
	}
	// The conditional request carries both validators.
	src := mustOpen(t, httpSpec(srv.srv.URL+"/304"), env)
	res, err := src.Fetch(context.Background(), adapters.Request{URI: uri, Previous: &adapters.Previous{Revision: "sha256:0123456789ab", ETag: `"x"`, LastModified: "Wed, 01 Jan 2026 00:00:00 GMT"}})
	if err != nil || !res.NotModified || res.Revision != "sha256:0123456789ab" || res.ETag != `"x"` {
		t.Errorf("conditional 304: %+v, %v", res, err)
	}
	last := srv.headers[len(srv.headers)-1]
	if last.Get("If-None-Match") != `"x"` || last.Get("If-Modified-Since") == "" {
		t.Errorf("conditional headers %v", last)
	}
	// User information never reaches provenance.
	r, err = fetchSpec(t, httpSpec("http://reader:hunter2@"+strings.TrimPrefix(srv.srv.URL, "http://")+"/data?access_token=abc&v=2"), env)
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Provenance["url"]; strings.Contains(p, "hunter2") || strings.Contains(p, "abc") || !strings.Contains(p, "v=2") {
		t.Errorf("provenance url %q", p)
	}
}

// TestHTTPValidatorsBounded: what a server says about its document (ETag,
// Last-Modified, Content-Type) is recorded in every observation and in
// every manifest entry that mounts it, and an ETag is the revision shown
// on each read: a hostile server's megabyte-long header was kept whole, in
// the store and on the terminal. Over-long validators are ignored (the
// revision is then the content's hash), and response headers are bounded.
func TestHTTPValidatorsBounded(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	srv := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("ETag", `"`+long+`"`)
		w.Header().Set("Last-Modified", "Mon, 02 Jan 2006 15:04:05 GMT "+long)
		w.Header().Set("Content-Type", "text/markdown; x="+long)
		w.Write([]byte("hello"))
	})
	r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc.md"), adapters.Env{Network: loopback})
	if err != nil {
		t.Fatal(err)
	}
	total := len(r.Revision) + len(r.ETag) + len(r.LastModified) + len(r.ContentType)
	for _, v := range r.Provenance {
		total += len(v)
	}
	if total > 4<<10 {
		t.Errorf("the result keeps %d bytes of the server's headers (revision %d, etag %d, last-modified %d, content type %d bytes)",
			total, len(r.Revision), len(r.ETag), len(r.LastModified), len(r.ContentType))
	}
	if r.Revision != "sha256:2cf24dba5fb0" || r.ContentType != "text/markdown" {
		t.Errorf("revision %.40q, content type %.40q; want the content's hash and the extension's type", r.Revision, r.ContentType)
	}

	// Headers past the transport's bound fail the fetch, naming the bound.
	huge := newRecorder(t, func(w http.ResponseWriter, _ *http.Request) {
		for i := range 40 {
			w.Header().Set(fmt.Sprintf("X-Pad-%d", i), long)
		}
		w.Write([]byte("hello"))
	})
	_, err = fetchSpec(t, httpSpec(huge.srv.URL+"/doc.md"), adapters.Env{Network: loopback})
	if err == nil || !strings.Contains(err.Error(), "header") {
		t.Errorf("400 KiB of response headers: %v; want refused", err)
	}
}

// TestHTTPRedirectTargetBounded: the URL a redirect leads to is recorded
// (final_url) in every observation and manifest entry that reads it, like
// the validators TestHTTPValidatorsBounded bounds: a server's 10 KiB
// Location was kept whole. A redirect to a URL longer than 8 KiB is
// refused, naming its length; one of ordinary length is followed.
func TestHTTPRedirectTargetBounded(t *testing.T) {
	long := strings.Repeat("x", 10<<10)
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/doc.md":
			http.Redirect(w, r, "/final.md?pad="+long, http.StatusFound)
		case "/short.md":
			http.Redirect(w, r, "/final.md?pad=abc", http.StatusFound)
		default:
			w.Write([]byte("hello"))
		}
	})
	r, err := fetchSpec(t, httpSpec(srv.srv.URL+"/doc.md"), adapters.Env{Network: loopback})
	if err == nil {
		total := 0
		for _, v := range r.Provenance {
			total += len(v)
		}
		t.Errorf("a redirect to a 10 KiB URL was followed; the result keeps %d bytes of provenance", total)
	} else if !strings.Contains(err.Error(), "redirect to a URL of") || len(err.Error()) > 1<<10 {
		t.Errorf("a redirect to a 10 KiB URL: %v; want it refused naming its length", err)
	}
	r, err = fetchSpec(t, httpSpec(srv.srv.URL+"/short.md"), adapters.Env{Network: loopback})
	if err != nil || !strings.HasSuffix(r.Provenance["final_url"], "/final.md?pad=abc") {
		t.Errorf("a redirect of ordinary length: %v, final_url %q", err, r.Provenance["final_url"])
	}
}
