package mcpserver

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/store"
)

// countingVerifier accepts one token and counts the checks made.
type countingVerifier struct {
	mu     sync.Mutex
	checks int
}

func (v *countingVerifier) verify(token string) (mcpauth.Caller, error) {
	v.mu.Lock()
	v.checks++
	v.mu.Unlock()
	if token == "good" {
		return mcpauth.Caller{Name: "good", Scope: mcpauth.ScopeRead}, nil
	}
	return mcpauth.Caller{}, mcpauth.ErrUnknown
}

func (v *countingVerifier) count() int {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.checks
}

// post sends tools/list to h from remote with token ("" for none).
func post(h http.Handler, remote, token string) *httptest.ResponseRecorder {
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	r := httptest.NewRequest(http.MethodPost, "http://127.0.0.1/", strings.NewReader(body))
	r.RemoteAddr = remote
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("Accept", "application/json, text/event-stream")
	r.Header.Set("Mcp-Protocol-Version", "2025-06-18")
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestUntrustedBoundedPerAddress: requests refused for their token (none,
// or one the server did not issue) are bounded per remote address: past
// the burst an address gets 429 with Retry-After and its tokens are no
// longer checked, while a valid token from another address is served
// (also an IPv6 neighbour outside the /64), and a valid token's requests
// take nothing from its own address's budget. Before session 29 each
// such request was checked and answered 401, as fast as it was sent.
func TestUntrustedBoundedPerAddress(t *testing.T) {
	s, err := New(Options{Open: func() (*store.Store, error) { return nil, errors.New("no store in this test") }})
	if err != nil {
		t.Fatal(err)
	}
	var v countingVerifier
	// One refusal per 1,000 s beyond the burst: the bucket cannot refill
	// during the test.
	h, err := s.HTTPHandler(HTTPOptions{Verify: v.verify, UntrustedRate: 0.001, UntrustedBurst: 3})
	if err != nil {
		t.Fatal(err)
	}
	const junk = "10.0.0.1:4000"
	for i := range 3 {
		token := ""
		if i%2 == 1 {
			token = "rpmcp_" + strings.Repeat("0", 64)
		}
		if c := post(h, junk, token).Code; c != http.StatusUnauthorized {
			t.Fatalf("refusal %d within the burst: %d, want 401", i+1, c)
		}
	}
	checked := v.count()
	for range 10 {
		w := post(h, junk, "rpmcp_"+strings.Repeat("1", 64))
		if w.Code != http.StatusTooManyRequests {
			t.Fatalf("past the burst: %d, want 429", w.Code)
		}
		if secs, err := strconv.Atoi(w.Header().Get("Retry-After")); err != nil || secs < 1 {
			t.Fatalf("429 without a Retry-After in seconds: %q", w.Header().Get("Retry-After"))
		}
	}
	if n := v.count() - checked; n != 0 {
		t.Errorf("past the burst the server still checked %d tokens", n)
	}
	// the same address on another port is the same address
	if c := post(h, "10.0.0.1:4001", "").Code; c != http.StatusTooManyRequests {
		t.Errorf("the refused address from another port: %d, want 429", c)
	}
	// another address's valid token, many times over: served, and its
	// own address's budget untouched by them
	for range 10 {
		if c := post(h, "10.0.0.2:5000", "good").Code; c != http.StatusOK {
			t.Fatalf("a valid token from another address: %d, want 200", c)
		}
	}
	for i := range 3 {
		if c := post(h, "10.0.0.2:5000", "").Code; c != http.StatusUnauthorized {
			t.Errorf("refusal %d of the address whose valid token was served: %d, want 401", i+1, c)
		}
	}
	// IPv6: the /64 is one address; the next /64 is another
	for i := range 3 {
		post(h, "[2001:db8:0:1::"+strconv.Itoa(i+1)+"]:80", "")
	}
	if c := post(h, "[2001:db8:0:1::99]:80", "good").Code; c != http.StatusTooManyRequests {
		t.Errorf("a host of the refused /64: %d, want 429", c)
	}
	if c := post(h, "[2001:db8:0:2::1]:80", "good").Code; c != http.StatusOK {
		t.Errorf("a valid token from the next /64: %d, want 200", c)
	}
}

// TestUntrustedLimiterBounded: the limiter remembers at most its bound of
// addresses, forgetting the one used least recently, so addresses that
// each send one refused request cannot grow it without end.
func TestUntrustedLimiterBounded(t *testing.T) {
	l := newUntrustedLimiter(0.001, 1, 8)
	now := time.Now()
	first, _ := addrKey("192.0.2.1:1")
	l.charge(first, now)
	for i := range 100 {
		a, _ := addrKey("198.51.100." + strconv.Itoa(i) + ":1")
		l.charge(a, now)
		l.wait(first, now) // used: kept
		if n := l.remembered(); n > 8 {
			t.Fatalf("%d addresses remembered, over the bound of 8", n)
		}
	}
	if l.wait(first, now) == 0 {
		t.Errorf("the address used most recently was forgotten")
	}
	old, _ := addrKey("198.51.100.0:1")
	if l.wait(old, now) != 0 {
		t.Errorf("the address used least recently was kept")
	}
}

// FuzzAddrKey: the key of a remote address never panics, is an IPv4
// address whole or an IPv6 /64 (never a wider prefix, which would put
// other hosts' refusals in one bucket), and does not depend on the port.
func FuzzAddrKey(f *testing.F) {
	for _, s := range []string{"127.0.0.1:80", "[::1]:443", "[2001:db8::1%eth0]:1", "[::ffff:10.0.0.1]:5", "10.0.0.1", "x:1", "", "[]:0", "@"} {
		f.Add(s, uint16(8080))
	}
	f.Fuzz(func(t *testing.T, remote string, port uint16) {
		p, ok := addrKey(remote)
		if !ok {
			return
		}
		switch {
		case p.Addr().Is4() && p.Bits() != 32, p.Addr().Is6() && p.Bits() != 64, !p.IsValid():
			t.Fatalf("%q: key %v", remote, p)
		case p.Addr().Zone() != "" || p.Addr().Is4In6():
			t.Fatalf("%q: key %v keeps a zone or a mapped IPv4", remote, p)
		}
		// an IPv4 address written as IPv6 (::ffff:a.b.c.d, as a
		// dual-stack socket may give it) is that IPv4 address, not the
		// /64 every such address shares
		if host, _, err := net.SplitHostPort(remote); err == nil {
			if a, err := netip.ParseAddr(host); err == nil && a.Is4In6() && p != netip.PrefixFrom(a.Unmap(), 32) {
				t.Fatalf("%q: key %v, want %v/32", remote, p, a.Unmap())
			}
		}
		q, ok := addrKey(net.JoinHostPort(p.Addr().String(), strconv.Itoa(int(port))))
		if !ok || q != p {
			t.Fatalf("%q: key %v, and %v on port %d", remote, p, q, port)
		}
	})
}
