package mcpserver

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnCapRealConnections: the cap's order with real connections and
// net/http's own hooks (a ConnState that also tells the test when a
// connection is idle, so nothing waits on time). With a bound of 2 held by
// two clients' kept-alive connections (each carried a request with a valid
// token), a raw connection closes the client connection waiting longest,
// since every waiting one is a client's; a second raw connection then
// closes the first raw one, not the other client's: connections without a
// token close at most one client connection each time clients' idle
// connections fill the bound, and never one while a connection without a
// token waits.
func TestConnCapRealConnections(t *testing.T) {
	conns := &connCap{max: 2, held: map[net.Conn]connState{}}
	idle := make(chan struct{}, 16)
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer good" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		trustConn(ok).ServeHTTP(w, r)
	})
	srv := &http.Server{Handler: h, ConnContext: conns.connContext, ReadHeaderTimeout: time.Minute,
		ConnState: func(c net.Conn, st http.ConnState) {
			conns.track(c, st)
			if st == http.StateIdle {
				idle <- struct{}{}
			}
		}}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(conns.listener(ln))
	t.Cleanup(func() { srv.Close() })

	type client struct {
		net.Conn
		br *bufio.Reader
	}
	dial := func() client {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return client{c, bufio.NewReader(c)}
	}
	call := func(c client) error {
		if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer good\r\n\r\n"); err != nil {
			return err
		}
		resp, err := http.ReadResponse(c.br, nil)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.Close {
			t.Fatalf("a client's request: %d (close %v)", resp.StatusCode, resp.Close)
		}
		return nil
	}
	closed := func(c client) bool {
		t.Helper()
		// (a bound on the wait only: a connection held is never closed
		// by the test's server within it)
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := c.br.ReadByte()
		_ = c.SetReadDeadline(time.Time{})
		return errors.Is(err, io.EOF)
	}
	first, second := dial(), dial()
	for _, c := range []client{first, second} {
		if err := call(c); err != nil {
			t.Fatal(err)
		}
		<-idle
	}
	raw1 := dial()
	if !closed(first) {
		t.Fatalf("every waiting connection a client's: the one waiting longest was not closed")
	}
	raw2 := dial()
	if !closed(raw1) {
		t.Errorf("a second raw connection did not close the first, which carried no token")
	}
	if err := call(second); err != nil {
		t.Errorf("the other client's connection, once two raw ones arrived: %v", err)
	}
	_ = raw2
}
