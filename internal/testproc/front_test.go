package testproc

import (
	"bytes"
	"io"
	"net"
	"strings"
	"testing"
)

// TestFront: bytes pass both ways unchanged, a client's half-close reaches
// the server (which answers after it), and once closed the front refuses
// connections and has ended the ones it forwarded.
func TestFront(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	held := make(chan net.Conn, 1)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				// Reads all the client sends, then answers it reversed.
				data, _ := io.ReadAll(c)
				for i, j := 0, len(data)-1; i < j; i, j = i+1, j-1 {
					data[i], data[j] = data[j], data[i]
				}
				c.Write(data)
				if bytes.Equal(data, []byte("dloh")) {
					held <- c // stays open until the front closes it
					return
				}
				c.Close()
			}()
		}
	}()
	f, err := StartFront("127.0.0.1:0", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ask := func(msg string) (net.Conn, string) {
		c, err := net.Dial("tcp", f.l.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		for _, part := range []string{msg[:len(msg)/2], msg[len(msg)/2:]} {
			if _, err := c.Write([]byte(part)); err != nil {
				t.Fatal(err)
			}
		}
		c.(*net.TCPConn).CloseWrite()
		buf := make([]byte, len(msg))
		if _, err := io.ReadFull(c, buf); err != nil {
			t.Fatalf("reading the answer to %q: %v", msg, err)
		}
		return c, string(buf)
	}
	long := strings.Repeat("0123456789abcdef", 1<<14)
	c, got := ask(long)
	rev := []byte(long)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	if got != string(rev) {
		t.Fatalf("answer through the front differs (%d bytes, want %d)", len(got), len(rev))
	}
	if n, err := c.Read(make([]byte, 1)); n != 0 || err != io.EOF {
		t.Fatalf("after the server closed: read %d, %v; want EOF", n, err)
	}
	c.Close()
	c, got = ask("hold")
	if got != "dloh" {
		t.Fatalf("answer %q", got)
	}
	srv := <-held
	defer srv.Close()
	f.Close()
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("a forwarded connection is still open after Close")
	}
	c.Close()
	if c, err := net.Dial("tcp", f.l.Addr().String()); err == nil {
		c.Close()
		t.Fatal("the front still accepts after Close")
	}
}
