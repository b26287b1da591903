package mcpserver_test

// What a token holder can do with its token over HTTP, and what it cannot
// once the operator has taken the token back (session 28).

import (
	"fmt"
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
)

// tokenTable is a verifier whose tokens the test issues and revokes.
type tokenTable struct {
	mu      sync.Mutex
	callers map[string]mcpauth.Caller
	revoked map[string]bool
	checks  map[string]int
}

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
	tt.add("tok-a", "alice", mcpauth.ScopeWrite)
	tt.add("tok-b", "bob", mcpauth.ScopeWrite)
	h, err := srv.HTTPHandler(mcpserver.HTTPOptions{Verify: tt.Verify, MaxConcurrent: 1})
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)

	first := make(chan int, 1)
	go func() {
		code, _ := rawCall(t, ts.URL+"/", "tok-a", mcpserver.ToolResourcesList, `{}`)
		first <- code
	}()
	<-entered // alice's call holds the one slot
	second := make(chan string, 1)
	go func() {
		code, body := rawCall(t, ts.URL+"/", "tok-b", mcpserver.ToolRunStart, `{"run_id":"late"}`)
		second <- fmt.Sprint(code, " ", body)
	}()
	for tt.checked("tok-b") == 0 {
		// until bob's request is past the first check, on its way to
		// the queue (or in it)
		select {
		case got := <-second:
			t.Fatalf("bob's call was answered while the slot was held: %s", got)
		default:
		}
		time.Sleep(5 * time.Millisecond)
	}
	tt.revoke("tok-b")
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
