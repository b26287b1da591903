package adapters

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// connServer is a loopback server that counts the connections made to it.
func connServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/moved" {
			http.Redirect(w, r, "/doc", http.StatusFound)
			return
		}
		w.Write([]byte("the document"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

func fetchOK(t *testing.T, src Source, uri string) {
	t.Helper()
	r, err := src.Fetch(context.Background(), Request{URI: uri})
	if err != nil || string(r.Content) != "the document" {
		t.Fatalf("%s: %q, %v", uri, r.Content, err)
	}
}

// Sources with the same dial settings share one transport, so N resources
// on one server hold one idle connection, not N.
func TestHTTPSourcesShareConnections(t *testing.T) {
	srv, conns := connServer(t)
	// a timeout no other test uses: a transport of its own for this test
	net := NetPolicy{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}, Timeout: 41 * time.Second}
	const n = 5
	for i := 0; i < n; i++ {
		src, err := openHTTP(Spec{Type: "http", URL: srv.URL + "/doc"}, Env{Network: net})
		if err != nil {
			t.Fatal(err)
		}
		fetchOK(t, src, "readproof://t/doc")
	}
	if got := conns.Load(); got != 1 {
		t.Errorf("%d sources with the same settings made %d connections, want 1", n, got)
	}
	// Other dial settings: another transport, another connection.
	other := net
	other.AllowHosts = []string{"unrelated.example.test"}
	src, _ := openHTTP(Spec{Type: "http", URL: srv.URL + "/doc"}, Env{Network: other})
	fetchOK(t, src, "readproof://t/other")
	if got := conns.Load(); got != 2 {
		t.Errorf("a source with other dial settings: %d connections in all, want 2", got)
	}
}

// Sharing keeps each source's settings exact: a connection one source's
// allow-list let it make is not reused by a source that does not allow the
// address, and redirect policy stays the source's own.
func TestSharedTransportKeepsEachSourcesPolicy(t *testing.T) {
	srv, _ := connServer(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	byName := "http://localhost:" + port
	allowed := NetPolicy{AllowHosts: []string{"localhost"}, Timeout: 43 * time.Second}
	src, _ := openHTTP(Spec{Type: "http", URL: byName + "/doc"}, Env{Network: allowed})
	fetchOK(t, src, "readproof://t/allowed")
	// Same timeout, no allow-list: its dial is refused, pooled connection
	// to the same address or not.
	strict := NetPolicy{Timeout: 43 * time.Second}
	src, _ = openHTTP(Spec{Type: "http", URL: byName + "/doc"}, Env{Network: strict})
	if _, err := src.Fetch(context.Background(), Request{URI: "readproof://t/strict"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("a source that does not allow loopback fetched it: %v", err)
	}
	// Same dial settings, other redirect bounds: one transport, each
	// client its own CheckRedirect.
	noRedirects := allowed
	noRedirects.MaxRedirects = -1
	src, _ = openHTTP(Spec{Type: "http", URL: byName + "/moved"}, Env{Network: noRedirects})
	if _, err := src.Fetch(context.Background(), Request{URI: "readproof://t/none"}); err == nil || !strings.Contains(err.Error(), "redirect") {
		t.Fatalf("max_redirects < 0 followed a redirect: %v", err)
	}
	src, _ = openHTTP(Spec{Type: "http", URL: byName + "/moved"}, Env{Network: allowed})
	fetchOK(t, src, "readproof://t/moved")
}

// The dial settings name a transport unambiguously: an allow-list of one
// odd name ("localhost,x", which a library caller can pass) is not the
// allow-list of the two names it would read as if joined with commas, so
// a connection the second let its source make is not handed to the
// first, whose own dial would refuse the address.
func TestSharedTransportKeyIsUnambiguous(t *testing.T) {
	srv, _ := connServer(t)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	byName := "http://localhost:" + port
	// a timeout no other test uses: these transports are this test's own
	two := NetPolicy{AllowHosts: []string{"localhost", "x"}, Timeout: 47 * time.Second}
	src, _ := openHTTP(Spec{Type: "http", URL: byName + "/doc"}, Env{Network: two})
	fetchOK(t, src, "readproof://t/two")
	one := NetPolicy{AllowHosts: []string{"localhost,x"}, Timeout: 47 * time.Second}
	src, _ = openHTTP(Spec{Type: "http", URL: byName + "/doc"}, Env{Network: one})
	if _, err := src.Fetch(context.Background(), Request{URI: "readproof://t/one"}); !errors.Is(err, ErrRefused) {
		t.Fatalf("a source that does not allow loopback fetched it on another source's connection: %v", err)
	}
}

// The shared transports are bounded: a process that goes through many
// sets of dial settings (mcp serve reloading policies whose [network]
// changes) keeps the maxSharedTransports used last. An evicted transport's
// idle connections are closed; a source that still holds it keeps
// working, and sources with its settings share a new one.
func TestSharedTransportsBounded(t *testing.T) {
	var conns atomic.Int64
	closed := make(chan struct{}, 16)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("the document"))
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		switch s {
		case http.StateNew:
			conns.Add(1)
		case http.StateClosed:
			closed <- struct{}{}
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	loopback := []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	// a timeout no other test uses: a transport of its own
	first := NetPolicy{AllowCIDRs: loopback, Timeout: 53 * time.Second}
	old, err := openHTTP(Spec{Type: "http", URL: srv.URL + "/doc"}, Env{Network: first})
	if err != nil {
		t.Fatal(err)
	}
	fetchOK(t, old, "readproof://t/first")
	if got := conns.Load(); got != 1 {
		t.Fatalf("%d connections, want 1", got)
	}
	// as many other settings as are kept, each used once
	for i := 0; i < maxSharedTransports; i++ {
		newGuard(NetPolicy{AllowCIDRs: loopback, Timeout: time.Duration(1000+i) * time.Second}).client()
	}
	if n := sharedTransports.len(); n > maxSharedTransports {
		t.Errorf("%d shared transports kept, want at most %d", n, maxSharedTransports)
	}
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("the idle connection of the evicted transport is still open")
	}
	// The source that holds the evicted transport still reads.
	fetchOK(t, old, "readproof://t/first-again")
	if got := conns.Load(); got != 2 {
		t.Errorf("%d connections, want 2", got)
	}
	// Sources with the first settings share one new transport.
	for i := 0; i < 3; i++ {
		src, _ := openHTTP(Spec{Type: "http", URL: srv.URL + "/doc"}, Env{Network: first})
		fetchOK(t, src, "readproof://t/again")
	}
	if got := conns.Load(); got != 3 {
		t.Errorf("three sources with the first settings: %d connections in all, want 3", got)
	}
}
