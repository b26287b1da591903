package mcpserver

import (
	"fmt"
	"net"
	"net/http"
	"testing"
)

// TestConnCapForgetsConnectionsGone: a connection closed or hijacked
// while it waits (never sent a request, or idle after one, with a valid
// token or none) leaves its waiting list as it leaves held: none is left
// listed to grow memory, and the bound counts only the connections still
// open, so the one left waiting is not closed. (The re-read of session
// 29 found no test that failed when the closed path kept it listed.)
func TestConnCapForgetsConnectionsGone(t *testing.T) {
	for _, end := range []http.ConnState{http.StateClosed, http.StateHijacked} {
		for _, kind := range []string{"raw", "no token", "client"} {
			t.Run(fmt.Sprint(end, " ", kind), func(t *testing.T) {
				c := &connCap{max: 2, held: map[net.Conn]connState{}}
				for range 5 {
					c.makeRoom()
					conn := newFakeConn()
					c.track(conn, http.StateNew)
					if kind != "raw" {
						c.track(conn, http.StateActive)
						if kind == "client" {
							c.trust(conn)
						}
						c.track(conn, http.StateIdle)
					}
					c.track(conn, end)
					if n := c.waiting[0].Len() + c.waiting[1].Len(); n != 0 || len(c.at) != 0 || len(c.held) != 0 {
						t.Fatalf("after the connection ended: %d listed as waiting, %d elements, %d held; want none", n, len(c.at), len(c.held))
					}
				}
				c.makeRoom()
				last := newFakeConn()
				c.track(last, http.StateNew)
				c.makeRoom()
				select {
				case <-last.closed:
					t.Fatal("the one open connection was closed at a bound of 2: ended connections were counted")
				default:
				}
			})
		}
	}
}
