package testproc

import (
	"io"
	"net"
	"sync"
)

// AckProxy forwards every connection made to its 127.0.0.1 address to
// target, a loopback server such as a git daemon. A git:// exchange
// straight to `git daemon` stalls 40 ms at most of its turns: neither git
// side turns Nagle's algorithm off, so the second of two small writes
// waits for the ACK of the first, and the reader's kernel holds that ACK
// back for its delayed-ACK timer (40 ms on Linux) since it sends no reply
// before the whole request is in. A `git ls-remote` to a daemon takes
// 40-50 ms where the same over protocol v0 (one write a turn) takes 2; a
// `readproof push` makes three such connections. Through the proxy both
// loopback legs ACK at once (TCP_QUICKACK, on Linux, set again after every
// read: the kernel leaves quick-ACK mode on its own) and the proxy's own
// writes go out at once (Go turns Nagle off), so no segment waits for a
// timer. What the two git sides send each other is unchanged.
type AckProxy struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	wg     sync.WaitGroup
}

// StartAckProxy listens on a free 127.0.0.1 port and forwards to target
// (host:port) until Close.
func StartAckProxy(target string) (*AckProxy, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &AckProxy{l: l, target: target, conns: map[net.Conn]bool{}}
	p.wg.Add(1)
	go p.serve()
	return p, nil
}

// Port is the port the proxy listens on.
func (p *AckProxy) Port() int { return p.l.Addr().(*net.TCPAddr).Port }

// Close stops listening, cuts every open connection and returns once
// every forwarding goroutine has ended.
func (p *AckProxy) Close() {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	p.l.Close()
	p.wg.Wait()
}

// track records c as open, or closes it and reports false once the proxy
// is closed.
func (p *AckProxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *AckProxy) forget(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *AckProxy) serve() {
	defer p.wg.Done()
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		if !p.track(c) {
			continue
		}
		p.wg.Add(1)
		go func() {
			defer p.wg.Done()
			defer p.forget(c)
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			if !p.track(s) {
				return
			}
			defer p.forget(s)
			client, server := c.(*net.TCPConn), s.(*net.TCPConn)
			quickAck(client)
			quickAck(server)
			done := make(chan struct{})
			go func() {
				io.Copy(server, ackReader{client})
				server.CloseWrite() // the client said all it had: so does the proxy
				close(done)
			}()
			io.Copy(client, ackReader{server})
			client.CloseWrite()
			<-done
		}()
	}
}

// ackReader reads from a connection and sets it to ACK at once again
// after every read.
type ackReader struct{ c *net.TCPConn }

func (r ackReader) Read(b []byte) (int, error) {
	n, err := r.c.Read(b)
	quickAck(r.c)
	return n, err
}
