package mcpserver_test

// What a token holder can do with its token over HTTP, and what it cannot
// once the operator has taken the token back (session 28).

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
	"github.com/readproof/readproof/receipts"
)

// tokenTable is a verifier whose tokens the test issues and revokes.
type tokenTable struct {
	mu      sync.Mutex
	callers map[string]mcpauth.Caller
	revoked map[string]bool
	checks  map[string]int
}

// Fixture tokens of a tokenTable, shaped as the server's (a string of any
// other shape is refused before any check).
const (
	tokW = "rpmcp_" + "e1e1e1e1e1e1e1e1" + "e1e1e1e1e1e1e1e1" + "e1e1e1e1e1e1e1e1" + "e1e1e1e1e1e1e1e1"
	tokA = "rpmcp_" + "a1a1a1a1a1a1a1a1" + "a1a1a1a1a1a1a1a1" + "a1a1a1a1a1a1a1a1" + "a1a1a1a1a1a1a1a1"
	tokB = "rpmcp_" + "b1b1b1b1b1b1b1b1" + "b1b1b1b1b1b1b1b1" + "b1b1b1b1b1b1b1b1" + "b1b1b1b1b1b1b1b1"
)

func newTokenTable() *tokenTable {
	return &tokenTable{callers: map[string]mcpauth.Caller{}, revoked: map[string]bool{}, checks: map[string]int{}}
}

func (tt *tokenTable) add(token, name string, scope mcpauth.Scope) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.callers[token] = mcpauth.Caller{Name: name, Scope: scope}
}

func (tt *tokenTable) revoke(token string) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.revoked[token] = true
}

func (tt *tokenTable) checked(token string) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return tt.checks[token]
}

func (tt *tokenTable) Verify(token string) (mcpauth.Caller, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.checks[token]++
	c, ok := tt.callers[token]
	switch {
	case !ok:
		return mcpauth.Caller{}, mcpauth.ErrUnknown
	case tt.revoked[token]:
		return mcpauth.Caller{}, fmt.Errorf("%w: %s", mcpauth.ErrRevoked, c.Name)
	}
	return c, nil
}

// rawCall posts one tools/call and returns the status and the body.
func rawCall(t testing.TB, url, token, tool, args string) (int, string) {
	t.Helper()
	s := &httpServer{url: url}
	resp, body := s.postRaw(t, token, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`}}`)
	return resp.StatusCode, body
}

// TestHTTPTokenRevokedWhileQueued: a request that waits for a
// --max-concurrent slot is checked again when it leaves the queue, so a
// token revoked meanwhile runs nothing (401). Before session 28 the token
// was checked once, on arrival, and the call ran up to --max-concurrent's
// wait of 10 s after `readproof mcp token revoke`.
func TestHTTPTokenRevokedWhileQueued(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var opens atomic.Int32
	open := p.opener()
	srv, err := mcpserver.New(mcpserver.Options{Open: func() (*store.Store, error) {
		if opens.Add(1) == 1 {
			close(entered)
			<-release
		}
		return open()
	}})
	if err != nil {
		t.Fatal(err)
	}
	tt := newTokenTable()
	tt.add(tokA, "alice", mcpauth.ScopeWrite)
	tt.add(tokB, "bob", mcpauth.ScopeWrite)
	h, err := srv.HTTPHandler(mcpserver.HTTPOptions{Verify: tt.Verify, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)

	first := make(chan int, 1)
	go func() {
		code, _ := rawCall(t, ts.URL+"/", tokA, mcpserver.ToolResourcesList, `{}`)
		first <- code
	}()
	<-entered // alice's call holds the one slot
	second := make(chan string, 1)
	go func() {
		code, body := rawCall(t, ts.URL+"/", tokB, mcpserver.ToolRunStart, `{"run_id":"late"}`)
		second <- fmt.Sprint(code, " ", body)
	}()
	for tt.checked(tokB) == 0 {
		// until bob's request is past the first check, on its way to
		// the queue (or in it)
		select {
		case got := <-second:
			t.Fatalf("bob's call was answered while the slot was held: %s", got)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	tt.revoke(tokB)
	close(release)
	if code := <-first; code != http.StatusOK {
		t.Fatalf("alice's call: %d", code)
	}
	got := <-second
	if !strings.HasPrefix(got, "401 ") || !strings.Contains(got, "revoked") {
		t.Errorf("a call whose token was revoked while it waited for a slot: %.300s; want 401, the token was revoked", got)
	}
	if runs := p.cli(t, "run", "list"); strings.Contains(runs, "late") {
		t.Errorf("the revoked token's run was started:\n%s", runs)
	}
}

// TestHTTPReadTokenRecordsNoSnapshot: a snapshot recorded by a read is a
// write, so a token of scope read is served what the store holds (a tagged
// snapshot; under allow_stale the current one within max_age) and refused,
// by readproof_resolve and resources/read alike, where the freshness
// policy would read the source and record a new snapshot: before session 28
// a read token recorded a snapshot of a require_fresh document with every
// read, up to --rate a second.
func TestHTTPReadTokenRecordsNoSnapshot(t *testing.T) {
	t.Parallel()
	const staleURI = "readproof://demo/policies/shipping"
	p := newProject(t, "version = 1\n\n[[resource]]\nuri = \""+refundsURI+"\"\nsource = { type = \"filesystem\", path = \"policies/refunds.md\" }\n\n"+
		"[[resource]]\nuri = \""+staleURI+"\"\nsource = { type = \"filesystem\", path = \"policies/shipping.md\" }\npolicy = \"allow_stale\"\nmax_age = \"1h\"\n",
		map[string]string{"policies/refunds.md": "Refunds within 30 days.\n", "policies/shipping.md": "Ships in 2 days.\n"})
	w := p.tokenOf(t, "writer", mcpauth.ScopeWrite)
	r := p.tokenOf(t, "reader", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener()})
	ws, rs := srv.connect(t, w), srv.connect(t, r)

	// nothing recorded yet: even allow_stale would read the source
	msg := rs.fail(t, mcpserver.ToolResolve, map[string]any{"uri": staleURI})
	mustContain(t, "allow_stale, nothing recorded", msg, "record a new snapshot", `token "reader" has scope read: refused`, "hint: read a tagged snapshot")

	ws.ok(t, mcpserver.ToolResolve, map[string]any{"uri": refundsURI})
	ws.ok(t, mcpserver.ToolTagSet, map[string]any{"uri": refundsURI, "tag": "prod"})
	ws.ok(t, mcpserver.ToolResolve, map[string]any{"uri": staleURI})
	p.write(t, "policies/refunds.md", "Refunds within 14 days.\n")

	msg = rs.fail(t, mcpserver.ToolResolve, map[string]any{"uri": refundsURI})
	mustContain(t, "require_fresh", msg, "record a new snapshot", "require_fresh", "scope read: refused")
	if we := rs.readErr(t, refundsURI); !strings.Contains(we.Message, "scope read: refused") {
		t.Errorf("resources/read of a require_fresh document by a read token: %v", we)
	}
	doc := rs.ok(t, mcpserver.ToolResolve, map[string]any{"uri": refundsURI + "@prod"})
	if str(t, doc, "content") != "Refunds within 30 days.\n" {
		t.Errorf("tagged read: %v", doc)
	}
	doc = rs.ok(t, mcpserver.ToolResolve, map[string]any{"uri": staleURI})
	if str(t, doc, "decision") != "use_current" {
		t.Errorf("allow_stale within max_age: decision %q", str(t, doc, "decision"))
	}
	if c := rs.read(t, staleURI); c.Text != "Ships in 2 days.\n" {
		t.Errorf("resources/read allow_stale: %q", c.Text)
	}

	// one snapshot each: the write token's
	for _, uri := range []string{refundsURI, staleURI} {
		h := ws.ok(t, mcpserver.ToolHistory, map[string]any{"uri": uri})
		if n := len(list(t, h["snapshots"])); n != 1 {
			t.Errorf("%s: %d snapshots after the read token's reads, want the writer's 1", uri, n)
		}
	}
	// the write token still reads fresh
	doc = ws.ok(t, mcpserver.ToolResolve, map[string]any{"uri": refundsURI})
	if str(t, doc, "content") != "Refunds within 14 days.\n" || str(t, doc, "decision") != "fetch" {
		t.Errorf("write token's read: %v", doc)
	}
}

// TestHTTPReadTokenReceiptsBounded: with receipts on, every executed call
// of a read token is receipted, within a budget of its own
// (Options.ReadReceiptRate, ReadReceiptBurst); beyond it the call is
// refused before it runs, with no receipt, while a write token's calls go
// on. Before session 28 a read token wrote a receipt with each call, up to
// --rate (50 a second).
func TestHTTPReadTokenReceiptsBounded(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	w := p.tokenOf(t, "writer", mcpauth.ScopeWrite)
	r := p.tokenOf(t, "reader", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "bound-1",
		ReadReceiptRate: 1.0 / 3600, ReadReceiptBurst: 3})
	ws, rs := srv.connect(t, w), srv.connect(t, r)
	for i := range 3 {
		out := rs.ok(t, mcpserver.ToolResourcesList, nil)
		if !strings.HasPrefix(str(t, out, "receipt_id"), "rcpt_") {
			t.Fatalf("read call %d: no receipt: %v", i, out)
		}
	}
	msg := rs.fail(t, mcpserver.ToolResourcesList, nil)
	mustContain(t, "read token over its receipts", msg, `token "reader" has scope read`, "bound on the receipts a read token causes", "nothing recorded", "hint: call again in")
	if strings.Contains(msg, "receipt: rcpt_") {
		t.Errorf("the refused call was receipted: %s", msg)
	}
	for range 4 {
		ws.ok(t, mcpserver.ToolResourcesList, nil)
	}
	rep := ws.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": "[]"})
	if n := num(t, obj(t, rep["counts"]), "omitted"); n != 7 {
		t.Errorf("the session holds %d receipts, want 3 of the read token and 4 of the write token", n)
	}
}

// TestHTTPReadTokenSeesOnlyItsReceipts: readproof_receipts_verify_claims
// shows a token of scope read the receipts issued to it, whatever session
// it names: another client's receipt that it cites is answered as an id no
// receipt has, in the same words (no oracle of which ids exist), and none
// is listed in omitted. A write token sees every receipt. Before session 28
// any token checked any receipt and listed, in omitted, every call of a
// session it named (the server's own, which every token shares).
func TestHTTPReadTokenSeesOnlyItsReceipts(t *testing.T) {
	t.Parallel()
	p, keyPath := receiptsProject(t)
	key, err := receipts.LoadKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	a := p.tokenOf(t, "alice", mcpauth.ScopeWrite)
	b := p.tokenOf(t, "bob", mcpauth.ScopeRead)
	c := p.tokenOf(t, "carol", mcpauth.ScopeRead)
	srv := p.serveHTTPOpts(t, mcpserver.Options{Open: p.opener(), ReceiptKey: key, Session: "shared-1"})
	as, bs, cs := srv.connect(t, a), srv.connect(t, b), srv.connect(t, c)
	aliceID := str(t, as.ok(t, mcpserver.ToolRunStart, map[string]any{"run_id": "secret-run"}), "receipt_id")
	bobID := str(t, bs.ok(t, mcpserver.ToolResourcesList, nil), "receipt_id")
	const absent = "rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

	verdicts := func(rep map[string]any) map[string]string {
		out := map[string]string{}
		for _, cl := range list(t, rep["claims"]) {
			m := obj(t, cl)
			out[str(t, m, "id")] = str(t, m, "verdict") + ": " + str(t, m, "detail")
		}
		return out
	}
	omitted := func(rep map[string]any) string { return jsonOf(rep["omitted"]) }

	cited, _ := json.Marshal([]string{aliceID, bobID, absent})
	for _, session := range []string{"", "shared-1"} {
		rep := bs.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": string(cited), "session": session})
		v := verdicts(rep)
		if v[aliceID] != v[absent] || !strings.HasPrefix(v[absent], "fabricated") {
			t.Errorf("session %q: a read token citing another token's receipt got %q, and an absent id %q: want the same answer", session, v[aliceID], v[absent])
		}
		if !strings.HasPrefix(v[bobID], "valid") {
			t.Errorf("session %q: the read token's own receipt: %q", session, v[bobID])
		}
		if o := omitted(rep); strings.Contains(o, aliceID) || strings.Contains(o, "secret-run") || strings.Contains(o, "run_start") {
			t.Errorf("session %q: omitted shows the read token another token's call: %s", session, o)
		}
		if strings.Contains(jsonOf(rep), "secret-run") {
			t.Errorf("session %q: the answer names another token's run: %s", session, jsonOf(rep))
		}
	}
	// another read token sees neither alice's nor bob's
	rep := cs.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": "[]"})
	if o := omitted(rep); strings.Contains(o, aliceID) || strings.Contains(o, bobID) {
		t.Errorf("carol's omitted lists other tokens' receipts: %s", o)
	}
	// the write token sees all
	rep = as.ok(t, mcpserver.ToolReceiptsVerifyClms, map[string]any{"claims": `["` + bobID + `"]`})
	if v := verdicts(rep); !strings.HasPrefix(v[bobID], "valid") {
		t.Errorf("a write token citing a read token's receipt: %q", v[bobID])
	}
	if o := omitted(rep); !strings.Contains(o, aliceID) {
		t.Errorf("a write token's omitted lacks its own run_start receipt: %s", o)
	}
}

// TestHTTPIdleConnectionsCapped: connections that send nothing (no token
// needed to open one) are held to HTTPOptions.MaxConns: each new one closes
// the one idle longest, so a client opening many keeps no more than that
// number open on the server (a goroutine and its buffers each), and a
// legitimate client opening its own is served, also while more than
// MaxConns connections have a request in progress. Before session 28 every
// idle one was held until ReadHeaderTimeout (10 s) closed it.
func TestHTTPIdleConnectionsCapped(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener()})
	if err != nil {
		t.Fatal(err)
	}
	tt := newTokenTable()
	tt.add(tokW, "w", mcpauth.ScopeWrite)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.ServeHTTP(ctx, mcpserver.HTTPOptions{Verify: tt.Verify, MaxConns: 8}, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	const idle = 120
	conns := make([]net.Conn, 0, idle)
	var busyConns []net.Conn
	t.Cleanup(func() {
		for _, c := range append(conns, busyConns...) {
			c.Close()
		}
	})
	for range idle {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		conns = append(conns, c)
	}
	// Connections with a request in progress (a token's, its body
	// stalled) are not counted, and do not keep a new one out.
	const busy = 10
	for range busy {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatalf("dial: %v", err)
		}
		busyConns = append(busyConns, c)
		if _, err := c.Write([]byte("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + tokW + "\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n")); err != nil {
			t.Fatal(err)
		}
	}
	url := "http://" + ln.Addr().String() + "/"
	for i := range 3 {
		if code, body := rawCall(t, url, tokW, mcpserver.ToolResourcesList, `{}`); code != http.StatusOK {
			t.Fatalf("legitimate call %d among %d idle connections and %d busy ones: %d %.200s", i, idle, busy, code, body)
		}
	}
	// Each idle connection the server closed reads EOF; the ones it holds
	// block until the deadline.
	var held atomic.Int32
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(func() {
			_ = c.SetReadDeadline(time.Now().Add(3 * time.Second))
			if _, err := c.Read(make([]byte, 1)); err != nil {
				if ne, ok := err.(net.Error); ok && ne.Timeout() {
					held.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := held.Load(); n > 8 {
		t.Errorf("the server holds %d of %d idle connections open, over its MaxConns of 8", n, idle)
	}
}

// TestHTTPLogMasksTokens: the server's log (--verbose) never holds a token,
// wherever a client put it: the access log quotes the URL path (the
// endpoint answers every path), and a tool error quotes what a call sent.
// Before session 28 both were logged whole.
func TestHTTPLogMasksTokens(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	var log testproc.SyncBuffer
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener(), Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
	if err != nil {
		t.Fatal(err)
	}
	const tok = "rpmcp_00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"
	tt := newTokenTable()
	tt.add(tok, "w", mcpauth.ScopeWrite)
	h, err := srv.HTTPHandler(mcpserver.HTTPOptions{Verify: tt.Verify})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	if code, body := rawCall(t, ts.URL+"/mcp/"+tok, tok, mcpserver.ToolResourcesList, `{}`); code != http.StatusOK {
		t.Fatalf("token in the path: %d %.200s", code, body)
	}
	if code, body := rawCall(t, ts.URL+"/", tok, mcpserver.ToolResolve, `{"uri":"`+tok+`"}`); code != http.StatusOK || !strings.Contains(body, "isError") {
		t.Fatalf("token as an argument: %d %.200s", code, body)
	}
	got := string(log.Bytes())
	if strings.Contains(got, tok[len(mcpauth.TokenPrefix):len(mcpauth.TokenPrefix)+8]) {
		t.Errorf("the log holds the token:\n%s", got)
	}
	mustContain(t, "log", got, "path=/mcp/rpmcp_[REDACTED]", `tool error`, `rpmcp_[REDACTED]`)
}

// TestHTTPTokenRevokedWhileCallRuns: a token revoked while its call runs
// does not get the answer: the token is checked again when the answer is
// written, and the answer withheld (401). What the call did stays done.
// Before session 28 the answer (a document's bytes, a bundle) went to the
// revoked token.
func TestHTTPTokenRevokedWhileCallRuns(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	entered, release := make(chan struct{}), make(chan struct{})
	var opens atomic.Int32
	open := p.opener()
	srv, err := mcpserver.New(mcpserver.Options{Open: func() (*store.Store, error) {
		if opens.Add(1) == 1 {
			close(entered)
			<-release
		}
		return open()
	}})
	if err != nil {
		t.Fatal(err)
	}
	tt := newTokenTable()
	tt.add(tokA, "alice", mcpauth.ScopeWrite)
	h, err := srv.HTTPHandler(mcpserver.HTTPOptions{Verify: tt.Verify})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	answered := make(chan string, 1)
	go func() {
		code, body := rawCall(t, ts.URL+"/", tokA, mcpserver.ToolResolve, `{"uri":"`+refundsURI+`"}`)
		answered <- fmt.Sprint(code, " ", body)
	}()
	<-entered // the call runs
	tt.revoke(tokA)
	close(release)
	got := <-answered
	if !strings.HasPrefix(got, "401 ") || !strings.Contains(got, "revoked while the call ran") || strings.Contains(got, "refunded") {
		t.Errorf("a call whose token was revoked while it ran was answered %.300s; want 401 and no document", got)
	}
}
