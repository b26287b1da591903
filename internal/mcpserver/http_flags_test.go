package mcpserver_test

import (
	"errors"
	"io"
	"net"
	"net/url"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/mcpserver"
)

// TestHTTPFlagsReachServer: `mcp --http` passes --read-receipt-rate,
// --read-receipt-burst and --max-idle-conns to the server: a read token's
// third receipted call is refused at a burst of 2, naming the bound the
// flags set, and with --max-idle-conns 1 a second raw connection closes
// the first. Before session 29 the receipt budget (1 a second, 60 at once)
// and the cap (512) had no flag.
func TestHTTPFlagsReachServer(t *testing.T) {
	t.Parallel()
	p, _ := receiptsProject(t)
	tok := p.token(t, "reader", "--scope", "read")
	srv := p.serveHTTP(t, "--read-receipt-rate", "0.001", "--read-receipt-burst", "2", "--max-idle-conns", "1")
	rs := srv.connect(t, tok)
	for range 2 {
		rs.ok(t, mcpserver.ToolResourcesList, nil)
	}
	msg := rs.fail(t, mcpserver.ToolResourcesList, nil)
	mustContain(t, "the third call of a read token at --read-receipt-burst 2", msg, "(0.001 a second, 2 at once)", "nothing recorded")

	u, err := url.Parse(srv.url)
	if err != nil {
		t.Fatal(err)
	}
	first, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	second, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	// (a bound on the wait only, should the server hold it: ReadHeaderTimeout
	// closes any connection after 10 s)
	_ = first.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := first.Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Errorf("the first raw connection, once a second arrived at --max-idle-conns 1: read %v, want it closed (EOF)", err)
	}
}
