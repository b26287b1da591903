package probe_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

// TestServerRateLimitPerPrefix: an IPv6 client owns a whole /64, so the
// rate limit counts it per /64 (PROBE_PROTOCOL.md §9.3): rotating the low
// 64 bits does not escape it, while another /64, every IPv4 address and an
// IPv4-mapped IPv6 address (counted as its IPv4 address) keep their own
// budgets.
func TestServerRateLimitPerPrefix(t *testing.T) {
	t.Parallel()
	k := testKeys(t, "rate64")
	rl := probe.RateLimit{Burst: 3, Every: time.Minute}
	srv, err := probe.NewServer(probe.ServerOptions{Keys: &k, Clock: newFakeClock(at(b0, 0)), ProbeRate: rl, VerifyRate: rl})
	if err != nil {
		t.Fatal(err)
	}
	get := func(remote string) int {
		r := httptest.NewRequest(http.MethodGet, "http://127.0.0.1/probe/s64", nil)
		r.RemoteAddr = remote
		w := httptest.NewRecorder()
		srv.ServeHTTP(w, r)
		return w.Code
	}
	for i := 1; i <= 3; i++ {
		if c := get(fmt.Sprintf("[2001:db8:1:2::%x]:4000", i)); c != http.StatusOK {
			t.Fatalf("request %d from 2001:db8:1:2::/64: %d", i, c)
		}
	}
	if c := get("[2001:db8:1:2:ffff:1:2:3]:4000"); c != http.StatusTooManyRequests {
		t.Errorf("a fourth address of 2001:db8:1:2::/64 over its budget: %d, want 429", c)
	}
	if c := get("[2001:db8:1:3::1]:4000"); c != http.StatusOK {
		t.Errorf("another /64, 2001:db8:1:3::1: %d, want 200", c)
	}
	for i := 1; i <= 3; i++ {
		if c := get("[::ffff:192.0.2.1]:4000"); c != http.StatusOK {
			t.Fatalf("request %d from ::ffff:192.0.2.1: %d", i, c)
		}
	}
	if c := get("192.0.2.1:4000"); c != http.StatusTooManyRequests {
		t.Errorf("192.0.2.1 after three requests as ::ffff:192.0.2.1: %d, want 429", c)
	}
	if c := get("192.0.2.2:4000"); c != http.StatusOK {
		t.Errorf("IPv4 192.0.2.2 beside 192.0.2.1 (same /24, /31): %d, want 200", c)
	}
}
