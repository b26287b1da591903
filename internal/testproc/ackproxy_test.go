package testproc

import (
	"bufio"
	"io"
	"net"
	"strconv"
	"testing"
	"time"
)

// TestAckProxyForwards: what a client sends reaches the server and the
// server's reply comes back, in order, over several turns; a client that
// closes its writing half is seen by the server as EOF while the reply
// still comes back; Close cuts a connection still open.
func TestAckProxyForwards(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	// the server answers every line with "got LINE" and, at EOF, with "bye"
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					io.WriteString(c, "got "+sc.Text()+"\n")
				}
				io.WriteString(c, "bye\n")
			}()
		}
	}()
	p, err := StartAckProxy(l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(p.Port())

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	for i := 0; i < 3; i++ {
		line := "line" + strconv.Itoa(i)
		io.WriteString(c, line+"\n")
		if got, err := r.ReadString('\n'); got != "got "+line+"\n" {
			t.Fatalf("turn %d: read %q, %v; want %q", i, got, err, "got "+line)
		}
	}
	c.(*net.TCPConn).CloseWrite()
	if rest, err := io.ReadAll(r); string(rest) != "bye\n" || err != nil {
		t.Fatalf("after the client's EOF: read %q, %v; want the server's %q then EOF", rest, err, "bye\n")
	}
	c.Close()

	open, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	io.WriteString(open, "x\n")
	if got, _ := bufio.NewReader(open).ReadString('\n'); got != "got x\n" {
		t.Fatalf("second connection: read %q", got)
	}
	p.Close()                                         // returns only once the open connection's goroutines ended
	open.SetReadDeadline(time.Now().Add(time.Minute)) // fail, not hang, if it stays open
	if n, err := open.Read(make([]byte, 1)); err == nil {
		t.Fatalf("a connection open at Close still reads (%d bytes)", n)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatal("the proxy still accepts after Close")
	}
}
