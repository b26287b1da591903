package mcpserver_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpauth"
	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/testproc"
)

// TestHTTPIdleCapSparesClientConnection: the connection cap closes a
// connection that never carried a valid token before one that did, so a
// client's kept-alive connection is not closed by raw connections opened
// after it, also while the client has begun its next request on it (its
// headers not yet whole, so the server counts it idle), nor by connections
// idle after a request that needed no token (OPTIONS *). Before the re-read
// of session 28 the cap closed the one idle longest, whoever's: MaxConns
// raw connections, no token needed, closed the client's connection under
// its request, which the client lost. (TestConnCapClosesUntrustedFirst
// pins the order without the network's timing.)
func TestHTTPIdleCapSparesClientConnection(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	// The access log says when a request's handler has returned: the
	// connection is idle a moment later (net/http's ConnState).
	var log testproc.SyncBuffer
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener(), Logger: slog.New(slog.NewTextHandler(&log, &slog.HandlerOptions{Level: slog.LevelInfo}))})
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
	go func() { done <- srv.ServeHTTP(ctx, mcpserver.HTTPOptions{Verify: tt.Verify, MaxConns: 4}, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	})
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	head := "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	rest := fmt.Sprintf("Authorization: Bearer "+tokW+"\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"Mcp-Protocol-Version: 2025-06-18\r\nContent-Length: %d\r\n\r\n%s", len(body), body)

	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	br := bufio.NewReader(client)
	answer := func(what string) {
		t.Helper()
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("%s: %d (close %v) %v", what, resp.StatusCode, resp.Close, err)
		}
	}
	if _, err := io.WriteString(client, head+rest); err != nil {
		t.Fatal(err)
	}
	answer("the client's first request")
	for !strings.Contains(string(log.Bytes()), "msg=http ") {
		// the answer is read before its handler returns (the SDK
		// flushes it)
		time.Sleep(time.Millisecond)
	}
	// The next request begins; the rest of it comes after the raw
	// connections.
	if _, err := io.WriteString(client, head); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		if i%2 == 1 {
			continue
		}
		// net/http answers OPTIONS * itself (200, kept alive), no
		// token asked: a connection idle after a request is not a
		// client's for that.
		if _, err := io.WriteString(c, "OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatalf("OPTIONS *: %v", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("OPTIONS *: %d (close %v), want 200 kept alive", resp.StatusCode, resp.Close)
		}
	}
	// A call on a connection of its own is answered once the server has
	// accepted every raw connection opened before it.
	if code, got := rawCall(t, "http://"+ln.Addr().String()+"/", tokW, mcpserver.ToolResourcesList, `{}`); code != http.StatusOK {
		t.Fatalf("a call after the raw connections: %d %.200s", code, got)
	}
	if _, err := io.WriteString(client, rest); err != nil {
		t.Fatalf("the rest of the client's request: %v", err)
	}
	answer("the client's second request, begun before 12 raw connections arrived (MaxConns 4)")
}
