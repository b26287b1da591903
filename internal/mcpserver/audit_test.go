package mcpserver_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/buildinfo"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/policy"
)

// Session 20 (audit): the HTTP server as a hostile caller meets it.

// serveHTTPWith is serveHTTPIn with options of the test's choosing (Verify
// is set to p's token file).
func (p *project) serveHTTPWith(t testing.TB, ho mcpserver.HTTPOptions) *httpServer {
	t.Helper()
	pol, err := policy.Load(p.config)
	if err != nil {
		t.Fatal(err)
	}
	v, err := mcpauth.NewVerifier(p.tokens(), keyloc.Forbidden(p.store, pol), nil)
	if err != nil {
		t.Fatal(err)
	}
	ho.Verify = v.Verify
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener(), Version: buildinfo.Read().Version})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &httpServer{url: "http://" + ln.Addr().String() + "/", done: make(chan error, 1)}
	go func() { s.done <- srv.ServeHTTP(ctx, ho, ln) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-s.done:
			if err != nil {
				t.Errorf("ServeHTTP returned %v after its context ended", err)
			}
		case <-time.After(30 * time.Second):
			t.Errorf("ServeHTTP did not return within 30 s of its context's end")
		}
	})
	return s
}

// TestHTTPUnreadAnswerFreesItsSlot: a client that sends a call and never
// reads its answer (an 8 MiB replay, more than the sockets buffer) held
// its --max-concurrent slot for as long as it kept the connection open, so
// one token with that many such calls stopped the server for every other
// token. The answer's write now fails once it makes no progress for
// AnswerTimeout, and the slot serves the next caller.
func TestHTTPUnreadAnswerFreesItsSlot(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	p.write(t, "policies/big.md", strings.Repeat("0123456789abcde\n", 1<<19))
	p.declare(t, "readproof://demo/policies/big", "policies/big.md")
	tok := p.token(t, "w")
	srv := p.serveHTTPWith(t, mcpserver.HTTPOptions{MaxConcurrent: 1, QueueWait: 2 * time.Second, AnswerTimeout: 200 * time.Millisecond})
	cs := srv.connect(t, tok)
	cs.ok(t, "readproof_run_start", map[string]any{"run_id": "big"})
	cs.ok(t, "readproof_run_mount", map[string]any{"run_id": "big", "uri": "readproof://demo/policies/big"})
	cs.ok(t, "readproof_run_commit", map[string]any{"run_id": "big"})
	// A connection that receives little: the server's write blocks.
	conn, err := net.Dial("tcp", strings.TrimSuffix(strings.TrimPrefix(srv.url, "http://"), "/"))
	if err != nil {
		t.Fatal(err)
	}
	if err := conn.(*net.TCPConn).SetReadBuffer(1024); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"readproof_replay","arguments":{"target":"big","include_content":true}}}`
	fmt.Fprintf(conn, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2025-06-18\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s", tok, len(body), body)
	// The answer has begun (its status line came), so the call holds the
	// slot; nothing more of it is read.
	first := make([]byte, 12)
	if _, err := io.ReadFull(conn, first); err != nil || string(first) != "HTTP/1.1 200" {
		t.Fatalf("the replay's answer began %q (%v)", first, err)
	}
	resp, _ := srv.postRaw(t, tok, listTools)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("another call while the only slot's client read none of its answer: %d, want 200 once the stalled answer is cut off", resp.StatusCode)
	}
}

// TestHTTPPublicServesProxiedHost: `readproof mcp --http ADDR --public`
// (with --insecure-public, "for a TLS-terminating proxy in front") answered
// 403 to every request a proxy on the same machine forwarded under the
// public name: the SDK refuses a Host that is not loopback on any
// connection that arrived at a loopback address, whatever the listener
// and the flags, while docs/README-mcp.md says that with --public the Host
// is not checked. With --public it now is not; without it a rebound name
// still gets 403 (TestHTTPBrowserPages).
func TestHTTPPublicServesProxiedHost(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	srv := p.serveHTTP(t, "--public")
	req, _ := http.NewRequest(http.MethodPost, srv.url, strings.NewReader(listTools))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+tok)
	req.Host = "mcp.example.org"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("mcp --http --public, a proxy's request with Host mcp.example.org and a valid token: %d %q, want 200", resp.StatusCode, body)
	}
}

// TestHTTPHugeMaxBody: an operator who gives --max-body a huge value (to
// mean "no limit": 2^60, or the largest int64) got 503 "server busy" for
// every request, or for every body longer than a few bytes: the body
// budget, twice --max-concurrent times --max-body, overflowed (to a
// negative number, or to 64 bytes). It now saturates, and requests are
// served.
func TestHTTPHugeMaxBody(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	tok := p.token(t, "w")
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"readproof_resources_list","arguments":{}}}`
	for _, max := range []int64{1 << 57, 1 << 60, math.MaxInt64} {
		srv := p.serveHTTPWith(t, mcpserver.HTTPOptions{MaxBodyBytes: max})
		if resp, body := srv.postRaw(t, tok, call); resp.StatusCode != http.StatusOK {
			t.Errorf("MaxBodyBytes %d: a %d-byte call got %d %q, want 200", max, len(call), resp.StatusCode, body)
		}
	}
}
