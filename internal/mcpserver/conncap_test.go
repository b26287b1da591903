package mcpserver

import (
	"net"
	"net/http"
	"testing"
)

// fakeConn is a connection connCap can close.
type fakeConn struct {
	net.Conn
	closed chan struct{}
}

func newFakeConn() *fakeConn { return &fakeConn{closed: make(chan struct{})} }

func (c *fakeConn) Close() error { close(c.closed); return nil }

// TestConnCapClosesUntrustedFirst: at its bound the cap closes the
// connection waiting longest among those that never carried a valid token
// (trust): raw ones, and ones idle after a request that needed none (net/http
// answers OPTIONS * itself), before a client's kept-alive connection idle
// longer than all of them; a client's goes only when every waiting one is a
// client's. The server's hooks are called in the order net/http calls them.
// Before the re-read of session 28 the client's connection went first.
func TestConnCapClosesUntrustedFirst(t *testing.T) {
	c := &connCap{max: 4, held: map[net.Conn]connState{}}
	accept := func() *fakeConn {
		c.makeRoom()
		conn := newFakeConn()
		c.track(conn, http.StateNew)
		return conn
	}
	request := func(conn *fakeConn, token bool) {
		c.track(conn, http.StateActive)
		if token {
			c.trust(conn)
		}
		c.track(conn, http.StateIdle)
	}
	client := accept()
	request(client, true)
	for i := range 12 {
		conn := accept()
		if i%2 == 0 {
			request(conn, false) // OPTIONS *
		}
	}
	if _, ok := c.held[client]; !ok {
		t.Fatalf("the client's connection was closed while connections without a token waited")
	}
	waiting := 0
	for _, st := range c.held {
		if !st.busy {
			waiting++
		}
	}
	if waiting > c.max {
		t.Errorf("%d connections wait, over the bound of %d", waiting, c.max)
	}
	// Only clients' connections wait: the one waiting longest goes.
	clients := []*fakeConn{client}
	for range c.max - 1 {
		conn := accept()
		request(conn, true)
		clients = append(clients, conn)
	}
	accept()
	if _, ok := c.held[client]; ok {
		t.Errorf("every waiting connection a client's: the one waiting longest was kept")
	}
	<-client.closed
	for _, conn := range clients[1:] {
		if _, ok := c.held[conn]; !ok {
			t.Errorf("a client's connection newer than the one waiting longest was closed")
		}
	}
}
