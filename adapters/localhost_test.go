package adapters

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// lyingResolver answers every name with addr and counts the questions.
func lyingResolver(addr string, asked *atomic.Int32) func(context.Context, string) ([]netip.Addr, error) {
	return func(context.Context, string) ([]netip.Addr, error) {
		asked.Add(1)
		return []netip.Addr{netip.MustParseAddr(addr)}, nil
	}
}

// The name localhost is this machine (RFC 6761): it is never looked up,
// whatever a hosts file or a resolver would answer. Not allowed, it is a
// loopback refusal from the name alone; allowed (by name or by a loopback
// CIDR), it is dialled at 127.0.0.1 or ::1, not where a resolver that
// lies sends it. A longer name that starts or ends like it is a name like
// any other, looked up and checked on its addresses.
func TestLocalhostNotLookedUp(t *testing.T) {
	ctx := context.Background()
	for _, host := range []string{"localhost", "LocalHost", "localhost."} {
		var asked atomic.Int32
		g := newGuard(NetPolicy{})
		g.lookup = lyingResolver("93.184.216.34", &asked)
		u, _ := url.Parse("http://" + host + ":8080/doc")
		for what, err := range map[string]error{
			"checkURL":  g.checkURL(u),
			"checkHost": g.checkHost(ctx, host, "9418"),
		} {
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "localhost is a loopback address") {
				t.Errorf("%s %s under a resolver that says public: %v, want a loopback refusal", what, host, err)
			}
		}
		if _, err := g.dialContext(ctx, "tcp", net.JoinHostPort(host, "8080")); !errors.Is(err, ErrRefused) {
			t.Errorf("dial %s: %v, want a loopback refusal", host, err)
		}
		if n := asked.Load(); n != 0 {
			t.Errorf("%s was looked up %d times", host, n)
		}
	}

	// Allowed, by name or by CIDR: dialled at loopback, where the lying
	// resolver (a private address) would not have sent it.
	for _, p := range []NetPolicy{
		{AllowHosts: []string{"localhost"}},
		{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}},
		{AllowCIDRs: []netip.Prefix{netip.MustParsePrefix("::1/128")}},
	} {
		var asked atomic.Int32
		g := newGuard(p)
		g.lookup = lyingResolver("10.1.2.3", &asked)
		var dialled []string
		g.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			return nil, errors.New("test: not connecting")
		}
		if err := g.checkHost(ctx, "localhost", "9418"); err != nil {
			t.Errorf("%+v: checkHost localhost: %v", p, err)
		}
		g.dialContext(ctx, "tcp", "localhost:9418")
		for _, a := range dialled {
			if a != "127.0.0.1:9418" && a != "[::1]:9418" {
				t.Errorf("%+v: localhost dialled at %s, want 127.0.0.1 or ::1", p, a)
			}
		}
		if len(dialled) == 0 || asked.Load() != 0 {
			t.Errorf("%+v: dialled %v after %d look-ups, want loopback and none", p, dialled, asked.Load())
		}
	}

	// Remote names: looked up, judged by their addresses.
	for _, host := range []string{"localhost.evil.example", "127.0.0.1.nip.io", "localhost..", "my-localhost"} {
		var asked atomic.Int32
		g := newGuard(NetPolicy{})
		g.lookup = lyingResolver("93.184.216.34", &asked)
		u, _ := url.Parse("http://" + host + "/doc")
		if err := g.checkURL(u); err != nil {
			t.Errorf("checkURL %s: %v", host, err)
		}
		if err := g.checkHost(ctx, host, "9418"); err != nil || asked.Load() != 1 {
			t.Errorf("checkHost %s (public answer): %v after %d look-ups, want allowed after one", host, err, asked.Load())
		}
		g.lookup = lyingResolver("127.0.0.1", &asked)
		if err := g.checkHost(ctx, host, "9418"); !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "resolved from") {
			t.Errorf("checkHost %s (loopback answer): %v, want refused on its address", host, err)
		}
	}
}

// An http source allowed localhost reads the server on 127.0.0.1 through
// the real dialer, the resolver never asked.
func TestLocalhostAllowedDialsLoopback(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("the document")) }))
	t.Cleanup(srv.Close)
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	// a timeout of its own: a transport of its own
	src, err := openHTTP(Spec{Type: "http", URL: "http://localhost:" + port + "/doc"}, Env{Network: NetPolicy{AllowHosts: []string{"localhost"}, Timeout: 47 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int32
	// the lie stays on this machine: another loopback address, where nothing listens
	src.(*httpSource).n.g.lookup = lyingResolver("127.0.0.2", &asked)
	fetchOK(t, src, "readproof://t/localhost")
	if n := asked.Load(); n != 0 {
		t.Errorf("localhost was looked up %d times", n)
	}
}

// localhost is dialled at 127.0.0.1, and at ::1 only when that fails; an
// address the policy refuses is not dialled, and the answer is the
// failure to reach the one allowed (a server down on ::1 is said so, not
// that 127.0.0.1 is refused).
func TestLocalhostFallback(t *testing.T) {
	ctx := context.Background()
	down := errors.New("test: nothing listens")
	v4 := netip.MustParsePrefix("127.0.0.0/8")
	v6 := netip.MustParsePrefix("::1/128")
	for _, c := range []struct {
		name    string
		p       NetPolicy
		network string
		up      string // the address that answers, "" for none
		dialled []string
		refused bool // the answer is a refusal, not down
	}{
		{"by name, 127.0.0.1 up", NetPolicy{AllowHosts: []string{"localhost"}}, "tcp", "127.0.0.1:80", []string{"127.0.0.1:80"}, false},
		{"by name, 127.0.0.1 down", NetPolicy{AllowHosts: []string{"localhost"}}, "tcp", "[::1]:80", []string{"127.0.0.1:80", "[::1]:80"}, false},
		{"by name, both down", NetPolicy{AllowHosts: []string{"localhost:80"}}, "tcp", "", []string{"127.0.0.1:80", "[::1]:80"}, false},
		{"::1 allowed, down", NetPolicy{AllowCIDRs: []netip.Prefix{v6}}, "tcp", "", []string{"[::1]:80"}, false},
		{"::1 allowed, up", NetPolicy{AllowCIDRs: []netip.Prefix{v6}}, "tcp", "[::1]:80", []string{"[::1]:80"}, false},
		{"127/8 allowed, down", NetPolicy{AllowCIDRs: []netip.Prefix{v4}}, "tcp", "", []string{"127.0.0.1:80"}, false},
		{"127/8 allowed, tcp6", NetPolicy{AllowCIDRs: []netip.Prefix{v4}}, "tcp6", "", nil, true},
		{"by name, tcp6", NetPolicy{AllowHosts: []string{"localhost"}}, "tcp6", "", []string{"[::1]:80"}, false},
		{"another port allowed", NetPolicy{AllowHosts: []string{"localhost:81"}}, "tcp", "", nil, true},
	} {
		g := newGuard(c.p)
		var dialled []string
		g.dial = func(_ context.Context, _, addr string) (net.Conn, error) {
			dialled = append(dialled, addr)
			if addr == c.up {
				a, b := net.Pipe()
				b.Close()
				return a, nil
			}
			return nil, down
		}
		conn, err := g.dialContext(ctx, c.network, "localhost:80")
		if conn != nil {
			conn.Close()
		}
		if strings.Join(dialled, " ") != strings.Join(c.dialled, " ") {
			t.Errorf("%s: dialled %q, want %q", c.name, dialled, c.dialled)
		}
		switch {
		case c.up != "" && err != nil:
			t.Errorf("%s: %v, want a connection to %s", c.name, err, c.up)
		case c.up == "" && c.refused && !errors.Is(err, ErrRefused):
			t.Errorf("%s: %v, want a refusal", c.name, err)
		case c.up == "" && !c.refused && !errors.Is(err, down):
			t.Errorf("%s: %v, want the failure to connect", c.name, err)
		}
	}
}
