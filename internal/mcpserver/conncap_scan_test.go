package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"testing"
	"time"
)

// TestConnCapChoosesWithoutScanning: the connection to close is chosen
// from the two waiting lists the hooks keep, in constant time, not by a
// scan of every held connection: a connection recorded in held without
// passing through the hooks (so in no list), waiting since long before
// the others, is not the one closed, while a scan would pick it. Before
// the re-read of session 29 each accept scanned every held connection
// under the lock (67 to 94 ms at the flag's bound of 1,000,000).
func TestConnCapChoosesWithoutScanning(t *testing.T) {
	c := &connCap{max: 2, held: map[net.Conn]connState{}}
	planted := newFakeConn()
	c.held[planted] = connState{since: time.Now().Add(-time.Hour)}
	first, second := newFakeConn(), newFakeConn()
	c.track(first, http.StateNew)
	c.track(second, http.StateNew)
	c.makeRoom()
	select {
	case <-first.closed:
	case <-planted.closed:
		t.Fatal("the choice scanned held: it closed a connection no list holds")
	case <-time.After(10 * time.Second):
		t.Fatal("at the bound, no connection was closed")
	}
	if _, ok := c.held[second]; !ok {
		t.Error("the newer waiting connection was closed")
	}
}

// BenchmarkConnCapAccept is the cost of an accept (makeRoom, then the new
// connection's StateNew) with n connections waiting at the bound.
func BenchmarkConnCapAccept(b *testing.B) {
	for _, n := range []int{512, 20000, 1000000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			c := &connCap{max: n, held: map[net.Conn]connState{}}
			for range n {
				c.track(&benchConn{}, http.StateNew)
			}
			b.ResetTimer()
			for range b.N {
				c.makeRoom()
				c.track(&benchConn{}, http.StateNew)
			}
		})
	}
}

// benchConn is a connection whose Close does nothing.
type benchConn struct{ net.Conn }

func (*benchConn) Close() error { return nil }
