package probe_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/probe"
)

// TestServerRefusesReboundHost: a probe server on loopback answered a
// request addressed to any host name, so a web page whose DNS name was
// rebound to 127.0.0.1 could mint sentinels for any session and read them,
// spend them through POST /probe/verify before the agent reported them,
// and use up the loopback client's rate limit, which every local agent
// shares. Such a request is now refused with 403 before the rate limit,
// unaudited (a page could otherwise flood the audit log, as with 404s);
// requests addressed to localhost or a loopback address are served, and
// AnyHost (probe serve --public, for a proxy on the same machine) serves
// every host.
func TestServerRefusesReboundHost(t *testing.T) {
	t.Parallel()
	one := probe.RateLimit{Burst: 1, Every: time.Hour}
	audit := &testproc.SyncBuffer{}
	ts := startServer(t, probe.ServerOptions{ProbeRate: one, VerifyRate: one, Audit: audit})
	port := ts.url[strings.LastIndex(ts.url, ":")+1:]
	send := func(url, host, method string) (int, string) {
		t.Helper()
		var body io.Reader
		if method == http.MethodPost {
			body = strings.NewReader(`{"session_id":"sess-1","sentinel":"TW9pr7BTmyPAZRXZC5mK0w"}`)
		}
		req, _ := http.NewRequest(method, url, body)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.Header.Get("Cache-Control") == "" {
			t.Errorf("%s %s (Host %s): no Cache-Control", method, url, host)
		}
		return resp.StatusCode, string(b)
	}
	for _, host := range []string{"rebound.example:" + port, "rebound.example", "localhost.rebound.example:" + port, "127.0.0.1.nip.io:" + port} {
		if c, b := send(ts.url+"/probe/sess-1", host, http.MethodGet); c != http.StatusForbidden || !strings.Contains(b, `"error"`) || strings.Contains(b, "readproof probe:") {
			t.Errorf("GET /probe/sess-1 with Host %s: %d %q, want 403 with a JSON error and no sentinel", host, c, b)
		}
		if c, b := send(ts.url+probe.VerifyPath, host, http.MethodPost); c != http.StatusForbidden {
			t.Errorf("POST %s with Host %s: %d %q, want 403", probe.VerifyPath, host, c, b)
		}
	}
	if a := string(audit.Bytes()); a != "" {
		t.Errorf("the refused requests were audited:\n%s", a)
	}
	// The refused requests spent none of the loopback client's budget
	// (a burst of one on each endpoint).
	for _, host := range []string{"localhost:" + port} {
		if c, b := send(ts.url+"/probe/sess-1", host, http.MethodGet); c != http.StatusOK {
			t.Errorf("GET /probe/sess-1 with Host %s after the refused ones: %d %q, want 200", host, c, b)
		}
		if c, b := send(ts.url+probe.VerifyPath, host, http.MethodPost); c != http.StatusOK {
			t.Errorf("POST %s with Host %s after the refused ones: %d %q, want 200", probe.VerifyPath, host, c, b)
		}
	}
	for _, host := range []string{"127.0.0.1:" + port, "[::1]:" + port, "LOCALHOST"} {
		if c, b := send(ts.url+"/probe/sess-2", host, http.MethodGet); c == http.StatusForbidden {
			t.Errorf("GET with Host %s: %d %q, want it served (here 429: the budget is spent)", host, c, b)
		}
	}
	proxied := startServer(t, probe.ServerOptions{AnyHost: true})
	if c, b := send(proxied.url+"/probe/sess-1", "probe.example.org", http.MethodGet); c != http.StatusOK {
		t.Errorf("AnyHost, Host probe.example.org: %d %q, want 200", c, b)
	}
}

// TestLoopbackHost: localhost in any case and every loopback address, IPv4
// (127.0.0.0/8), IPv6 and IPv4-mapped, are loopback hosts; other names,
// other addresses and the empty host (every interface) are not.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LocalHost": true, "127.0.0.1": true, "127.9.8.7": true, "::1": true, "::ffff:127.0.0.1": true,
		"": false, "localhost.": false, "localhost.example.org": false, "example.org": false, "0.0.0.0": false, "::": false,
		"10.0.0.1": false, "192.0.2.7": false, "2001:db8::1": false, "[::1]": false, "127.0.0.1:80": false,
	} {
		if got := probe.LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
