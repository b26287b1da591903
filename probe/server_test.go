package probe_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/probe"
)

type testServer struct {
	url  string
	stop func() // cancels Serve and waits for it; handlers have finished after it
}

func startServer(t *testing.T, opts probe.ServerOptions) *testServer {
	t.Helper()
	srv, err := probe.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("Serve returned %v after cancel", err)
			}
		})
	}
	t.Cleanup(stop)
	return &testServer{url: "http://" + ln.Addr().String(), stop: stop}
}

// clientFrom returns an HTTP client whose connections leave from ip, so the
// server sees a different client address (all of 127/8 is loopback).
func clientFrom(t *testing.T, ip string) *http.Client {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 5 * time.Second}
	tr := &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, url string) (*http.Response, string) {
	t.Helper()
	resp, err := c.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

type verifyBody struct {
	Verdict    probe.Verdict `json:"verdict"`
	SessionID  string        `json:"session_id"`
	Bucket     *int64        `json:"bucket"`
	AgeSeconds *int64        `json:"age_seconds"`
	Reason     string        `json:"reason"`
	Error      string        `json:"error"`
}

func postVerify(t *testing.T, c *http.Client, base, session, sentinel string) (*http.Response, verifyBody, string) {
	t.Helper()
	body, _ := json.Marshal(probe.Report{SessionID: session, Sentinel: sentinel})
	resp, err := c.Post(base+probe.VerifyPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var v verifyBody
	if resp.StatusCode == http.StatusOK {
		if err := json.Unmarshal(raw, &v); err != nil {
			t.Fatalf("verify response %q: %v", raw, err)
		}
	}
	return resp, v, string(raw)
}

func checkNoStore(t *testing.T, resp *http.Response) {
	t.Helper()
	h := resp.Header
	cc := h.Get("Cache-Control")
	for _, d := range []string{"no-store", "no-cache", "max-age=0"} {
		if !strings.Contains(cc, d) {
			t.Errorf("%s %s: Cache-Control %q lacks %s", resp.Request.Method, resp.Request.URL.Path, cc, d)
		}
	}
	if h.Get("Pragma") != "no-cache" || h.Get("Expires") != "0" {
		t.Errorf("%s: Pragma %q Expires %q", resp.Request.URL.Path, h.Get("Pragma"), h.Get("Expires"))
	}
}

func fetchSentinel(t *testing.T, c *http.Client, base, session string) string {
	t.Helper()
	resp, body := get(t, c, base+"/probe/"+session)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET probe: %d %s", resp.StatusCode, body)
	}
	m := regexp.MustCompile(probe.ProbeLinePattern).FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no probe line in %q", body)
	}
	return m[1]
}

func TestServerRoundTrip(t *testing.T) {
	k := testKeys(t, "server")
	clk := newFakeClock(at(b0, 200))
	audit := &testproc.SyncBuffer{}
	ts := startServer(t, probe.ServerOptions{Keys: &k, Clock: clk, Audit: audit})
	c := clientFrom(t, "127.0.0.1")

	resp, body := get(t, c, ts.url+"/probe/sess-1")
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
		t.Fatalf("GET: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	checkNoStore(t, resp)
	found := probe.FindSentinels(body)
	if len(found) != 1 {
		t.Fatalf("probe document holds %d sentinel-shaped values: %v", len(found), found)
	}
	s := found[0]
	if want, _ := k.Sentinel("sess-1", b0, 16); s != want {
		t.Fatal("served sentinel is not the protocol's sentinel")
	}

	clk.Set(at(b0+1, 30)) // inside the skew
	resp, v, raw := postVerify(t, c, ts.url, "sess-1", s)
	checkNoStore(t, resp)
	if v.Verdict != probe.ReadVerified || v.SessionID != "sess-1" || v.Bucket == nil || *v.Bucket != b0 {
		t.Fatalf("verify: %s", raw)
	}
	if strings.Contains(raw, s) {
		t.Fatal("verify response echoes the sentinel")
	}
	_, v, _ = postVerify(t, c, ts.url, "sess-1", s)
	if v.Verdict != probe.ReplaySuspect {
		t.Fatalf("second report: %+v", v)
	}
	_, v, raw = postVerify(t, c, ts.url, "sess-1", "AAAAAAAAAAAAAAAAAAAAAA")
	if v.Verdict != probe.Hallucinated || v.Bucket != nil || !strings.Contains(raw, `"bucket":null`) {
		t.Fatalf("random value: %s", raw)
	}
	s2 := fetchSentinel(t, c, ts.url, "sess-2")
	_, v, _ = postVerify(t, c, ts.url, "sess-3", s2)
	if v.Verdict != probe.ReplaySuspect {
		t.Fatalf("other session's sentinel: %+v", v)
	}
	clk.Set(at(b0+10, 0))
	_, v, _ = postVerify(t, c, ts.url, "sess-2", s2)
	if v.Verdict != probe.ReadStale {
		t.Fatalf("stale: %+v", v)
	}
}

func TestServerRealClock(t *testing.T) {
	// The normal configuration: process-scoped random secret, real clock.
	ts := startServer(t, probe.ServerOptions{})
	c := clientFrom(t, "127.0.0.1")
	s := fetchSentinel(t, c, ts.url, "live")
	_, v, raw := postVerify(t, c, ts.url, "live", s)
	if v.Verdict != probe.ReadVerified {
		t.Fatalf("verify: %s", raw)
	}
	// Another server (another process-scoped secret) knows nothing of it.
	other := startServer(t, probe.ServerOptions{})
	_, v, _ = postVerify(t, c, other.url, "live", s)
	if v.Verdict != probe.Hallucinated {
		t.Fatalf("other server: %+v", v)
	}
}

func TestServerRateLimit(t *testing.T) {
	k := testKeys(t, "rate")
	clk := newFakeClock(at(b0, 0))
	audit := &testproc.SyncBuffer{}
	rl := probe.RateLimit{Burst: 3, Every: time.Minute}
	ts := startServer(t, probe.ServerOptions{Keys: &k, Clock: clk, ProbeRate: rl, VerifyRate: rl, Audit: audit})
	a, b := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.2")

	for i := 0; i < 3; i++ {
		if resp, _ := get(t, a, ts.url+"/probe/ra"); resp.StatusCode != 200 {
			t.Fatalf("request %d: %d", i, resp.StatusCode)
		}
	}
	resp, body := get(t, a, ts.url+"/probe/ra")
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "60" {
		t.Fatalf("over the rate: %d Retry-After %q", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	checkNoStore(t, resp)
	if strings.Contains(body, "AAAA") || len(probe.FindSentinels(body)) != 0 {
		t.Fatalf("429 body carries a sentinel-shaped value: %q", body)
	}
	// Another client is unaffected, on both endpoints.
	s := fetchSentinel(t, b, ts.url, "rb")
	if _, v, _ := postVerify(t, b, ts.url, "rb", s); v.Verdict != probe.ReadVerified {
		t.Fatalf("second client: %+v", v)
	}
	// The verify endpoint has its own budget: a is still allowed there.
	for i := 0; i < 3; i++ {
		if resp, _, raw := postVerify(t, a, ts.url, "ra", "x"); resp.StatusCode != 200 {
			t.Fatalf("verify %d: %s", i, raw)
		}
	}
	if resp, _, _ := postVerify(t, a, ts.url, "ra", "x"); resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("verify over the rate: %d", resp.StatusCode)
	}
	// Half a token later the wait is 30 s; a whole token later a passes again.
	clk.Add(30 * time.Second)
	if resp, _ := get(t, a, ts.url+"/probe/ra"); resp.Header.Get("Retry-After") != "30" {
		t.Fatalf("Retry-After after 30 s: %q", resp.Header.Get("Retry-After"))
	}
	clk.Add(30 * time.Second)
	if resp, _ := get(t, a, ts.url+"/probe/ra"); resp.StatusCode != 200 {
		t.Fatalf("after refill: %d", resp.StatusCode)
	}
	ts.stop()
	log := audit.String()
	if !strings.Contains(log, `"event":"rate_limited"`) {
		t.Error("rate limiting not audited")
	}
	if !strings.Contains(log, k.ClientHash("127.0.0.2")) || !strings.Contains(log, k.ClientHash("127.0.0.1")) {
		t.Error("the two clients were not told apart by address")
	}
}

// rawPost sends a POST of body over a plain TCP connection, writing in the
// background while it reads the response, so a server that answers before
// reading everything is observed instead of racing a connection reset.
func rawPost(t *testing.T, base string, body []byte, chunked bool) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(20 * time.Second))
	go func() {
		var hdr string
		if chunked {
			hdr = "POST /probe/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
		} else {
			hdr = fmt.Sprintf("POST /probe/verify HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n", len(body))
		}
		if _, err := io.WriteString(conn, hdr); err != nil {
			return
		}
		for off := 0; off < len(body); off += 16 << 10 {
			part := body[off:min(off+16<<10, len(body))]
			if chunked {
				if _, err := fmt.Fprintf(conn, "%x\r\n%s\r\n", len(part), part); err != nil {
					return // the server stopped reading: expected
				}
			} else if _, err := conn.Write(part); err != nil {
				return
			}
		}
		if chunked {
			io.WriteString(conn, "0\r\n\r\n")
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: http.MethodPost})
	if err != nil {
		t.Fatalf("reading the response: %v", err)
	}
	resp.Body.Close()
	return resp
}

func TestServerBodyLimit(t *testing.T) {
	t.Parallel()
	k := testKeys(t, "body")
	ts := startServer(t, probe.ServerOptions{Keys: &k, Clock: newFakeClock(at(b0, 0))})
	big := bytes.Repeat([]byte("A"), 1<<20)
	for _, chunked := range []bool{false, true} {
		resp := rawPost(t, ts.url, big, chunked)
		if resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("1 MiB body (chunked=%v): status %d, want 413", chunked, resp.StatusCode)
		}
		if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
			t.Errorf("413 without no-store: %q", cc)
		}
	}
	c := clientFrom(t, "127.0.0.1")
	// One byte over the limit is refused, exactly at the limit the body is
	// read (and refused as JSON).
	for n, want := range map[int]int{probe.MaxReportBytes + 1: 413, probe.MaxReportBytes: 400} {
		resp, err := c.Post(ts.url+probe.VerifyPath, "application/json", bytes.NewReader(big[:n]))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Fatalf("%d-byte body: %d, want %d", n, resp.StatusCode, want)
		}
		checkNoStore(t, resp)
	}
}

func TestServerRequests(t *testing.T) {
	k := testKeys(t, "requests")
	ts := startServer(t, probe.ServerOptions{Keys: &k, Clock: newFakeClock(at(b0, 0))})
	c := clientFrom(t, "127.0.0.1")
	do := func(method, path, body string) *http.Response {
		req, _ := http.NewRequest(method, ts.url+path, strings.NewReader(body))
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		checkNoStore(t, resp)
		return resp
	}
	cases := []struct {
		method, path, body string
		status             int
		allow              string
	}{
		{"POST", "/probe/sess", "", 405, "GET"},
		{"PUT", "/probe/sess", "", 405, "GET"},
		{"GET", "/probe/verify", "", 405, "POST"},
		{"DELETE", "/probe/verify", "", 405, "POST"},
		{"GET", "/probe/", "", 400, ""},
		{"GET", "/probe/bad..id", "", 400, ""},
		{"GET", "/probe/-x", "", 400, ""},
		{"GET", "/probe/a%2Fb", "", 400, ""},
		{"GET", "/probe/a/b", "", 400, ""},
		{"GET", "/probe/" + strings.Repeat("a", 193), "", 400, ""},
		{"GET", "/elsewhere", "", 404, ""},
		{"GET", "/probe", "", 404, ""},
		{"POST", "/probe/verify", `{"session_id":"s"}`, 400, ""},
		{"POST", "/probe/verify", `not json`, 400, ""},
		{"POST", "/probe/verify", `{"session_id":"bad id","sentinel":"x"}`, 400, ""},
		{"GET", "/probe/" + strings.Repeat("a", 192), "", 200, ""},
	}
	for _, cs := range cases {
		resp := do(cs.method, cs.path, cs.body)
		if resp.StatusCode != cs.status {
			t.Errorf("%s %.40s: %d, want %d", cs.method, cs.path, resp.StatusCode, cs.status)
		}
		if cs.allow != "" && resp.Header.Get("Allow") != cs.allow {
			t.Errorf("%s %s: Allow %q", cs.method, cs.path, resp.Header.Get("Allow"))
		}
	}
}

func TestServerAuditLog(t *testing.T) {
	k := testKeys(t, "audit")
	clk := newFakeClock(at(b0, 0))
	audit := &testproc.SyncBuffer{}
	ts := startServer(t, probe.ServerOptions{Keys: &k, Clock: clk, Audit: audit,
		ProbeRate: probe.RateLimit{Burst: 4, Every: time.Hour}})
	a, b := clientFrom(t, "127.0.0.1"), clientFrom(t, "127.0.0.3")
	var sentinels []string
	for _, s := range []string{"audit-1", "audit-2"} {
		sentinels = append(sentinels, fetchSentinel(t, a, ts.url, s))
	}
	sentinels = append(sentinels, fetchSentinel(t, b, ts.url, "audit-3"))
	postVerify(t, a, ts.url, "audit-1", sentinels[0])
	postVerify(t, a, ts.url, "audit-1", sentinels[0])
	postVerify(t, b, ts.url, "audit-9", sentinels[1])
	random := "Zm9vYmFyYmF6cXV4cXV1eA"
	postVerify(t, b, ts.url, "audit-3", random)
	for i := 0; i < 4; i++ {
		get(t, a, ts.url+"/probe/audit-x")
	}
	get(t, b, ts.url+"/probe/bad..id")
	ts.stop() // every handler has finished writing its audit line

	log := audit.String()
	for _, secret := range append(sentinels, random, "127.0.0.1", "127.0.0.3") {
		if strings.Contains(log, secret) {
			t.Errorf("audit log contains %q", secret)
		}
	}
	lines := strings.Split(strings.TrimSpace(log), "\n")
	if len(lines) < 11 {
		t.Fatalf("%d audit lines:\n%s", len(lines), log)
	}
	allowed := map[string]bool{"time": true, "event": true, "client": true, "session_id": true, "verdict": true, "status": true}
	verdicts := map[string]int{}
	hashes := map[string]bool{}
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("audit line %q: %v", l, err)
		}
		for key := range m {
			if !allowed[key] {
				t.Errorf("audit line has field %q: %s", key, l)
			}
		}
		if _, err := time.Parse(time.RFC3339, m["time"].(string)); err != nil {
			t.Errorf("time %v", m["time"])
		}
		client, _ := m["client"].(string)
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(client) {
			t.Errorf("client %q is not a 16-byte hex hash", client)
		}
		hashes[client] = true
		if v, ok := m["verdict"].(string); ok {
			verdicts[v]++
		}
	}
	if len(hashes) != 2 || !hashes[k.ClientHash("127.0.0.1")] || !hashes[k.ClientHash("127.0.0.3")] {
		t.Errorf("client hashes %v", hashes)
	}
	want := map[string]int{"READ_VERIFIED": 1, "REPLAY_SUSPECT": 2, "HALLUCINATED": 1}
	for v, n := range want {
		if verdicts[v] != n {
			t.Errorf("audit has %d %s verdicts, want %d (%v)", verdicts[v], v, n, verdicts)
		}
	}
	if !strings.Contains(log, `"event":"rate_limited"`) || !strings.Contains(log, `"status":400`) {
		t.Errorf("rate limit or rejection not audited:\n%s", log)
	}
}

func TestServerOptions(t *testing.T) {
	for _, o := range []probe.ServerOptions{
		{Length: 8},
		{MaxClients: -1},
		{ProbeRate: probe.RateLimit{Burst: 0, Every: time.Second}},
		{VerifyRate: probe.RateLimit{Burst: 1, Every: -time.Second}},
		{Window: probe.Window{Skew: time.Hour}},
	} {
		if _, err := probe.NewServer(o); !errors.Is(err, probe.ErrOptions) {
			t.Errorf("%+v: %v", o, err)
		}
	}
}

func TestServeShutdown(t *testing.T) {
	srv, err := probe.NewServer(probe.ServerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	c := clientFrom(t, "127.0.0.1")
	if resp, _ := get(t, c, "http://"+ln.Addr().String()+"/probe/x"); resp.StatusCode != 200 {
		t.Fatalf("status %d", resp.StatusCode)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
	if _, err := c.Get("http://" + ln.Addr().String() + "/probe/x"); err == nil {
		t.Fatal("server still answers after shutdown")
	}
}

func TestClientAddr(t *testing.T) {
	r := httptest.NewRequest("GET", "/probe/x", nil)
	r.RemoteAddr = "[::ffff:10.1.2.3]:5555"
	if got := probe.RemoteIP(r); got != "10.1.2.3" {
		t.Errorf("RemoteIP = %q", got)
	}
	r.RemoteAddr = "[fe80::1%eth0]:80"
	if got := probe.RemoteIP(r); got != "fe80::1" {
		t.Errorf("RemoteIP with zone = %q", got)
	}
	fwd := probe.TrustForwardedFor(netip.MustParsePrefix("10.0.0.0/8"))
	r.RemoteAddr = "10.0.0.5:1234"
	r.Header.Set("X-Forwarded-For", "198.51.100.7, 203.0.113.1, 10.0.0.9")
	if got := fwd(r); got != "203.0.113.1" {
		t.Errorf("trusted proxy: %q", got)
	}
	r.RemoteAddr = "192.0.2.1:1234" // not a trusted proxy: the header is ignored
	if got := fwd(r); got != "192.0.2.1" {
		t.Errorf("untrusted peer: %q", got)
	}
	r.RemoteAddr = "10.0.0.5:1234"
	r.Header.Set("X-Forwarded-For", "garbage")
	if got := fwd(r); got != "10.0.0.5" {
		t.Errorf("malformed header: %q", got)
	}
}
