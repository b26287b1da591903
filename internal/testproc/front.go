package testproc

import (
	"errors"
	"io"
	"net"
	"sync"
)

// Front forwards TCP connections from its own address to a server's,
// acknowledging every segment it reads at once. A git client writes a
// protocol v2 request (ls-refs, which every fetch and ls-remote over git://
// sends) as one small write per pkt-line on a socket without TCP_NODELAY:
// after the first, Nagle's algorithm holds the rest until that segment is
// acknowledged, and `git daemon`'s end, with nothing to answer yet, delays
// the acknowledgement by Linux's 40 ms minimum. Every connection to a test
// daemon waited that long (a clone of a small repository 0.11 s direct,
// 0.05 s through a Front). Front's sockets set TCP_QUICKACK before each
// read, and, as Go's are, TCP_NODELAY, so neither end waits on the other;
// the bytes are passed through unchanged.
//
// Close stops listening (a client is then refused, as by a server that
// is gone) and closes every connection it forwards.
type Front struct {
	l      net.Listener
	target string
	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// StartFront listens on addr ("127.0.0.1:0" for a free port) and forwards
// each connection to target (host:port), dialled when the connection comes.
func StartFront(addr, target string) (*Front, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	f := &Front{l: l, target: target, conns: map[net.Conn]struct{}{}}
	f.wg.Add(1)
	go f.accept()
	return f, nil
}

// Port is the port Front listens on.
func (f *Front) Port() int { return f.l.Addr().(*net.TCPAddr).Port }

func (f *Front) accept() {
	defer f.wg.Done()
	for {
		c, err := f.l.Accept()
		if err != nil {
			return
		}
		f.wg.Add(1)
		go f.serve(c)
	}
}

// track registers c, or reports false once Close ran.
func (f *Front) track(c net.Conn) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return false
	}
	f.conns[c] = struct{}{}
	return true
}

func (f *Front) untrack(c net.Conn) {
	f.mu.Lock()
	delete(f.conns, c)
	f.mu.Unlock()
	c.Close()
}

func (f *Front) serve(c net.Conn) {
	defer f.wg.Done()
	if !f.track(c) {
		c.Close()
		return
	}
	defer f.untrack(c)
	up, err := net.Dial("tcp", f.target)
	if err != nil {
		return
	}
	if !f.track(up) {
		up.Close()
		return
	}
	defer f.untrack(up)
	back := make(chan struct{})
	go func() {
		forward(c, up)
		close(back)
	}()
	forward(up, c)
	<-back
}

// forward copies from src to dst until src ends, then ends dst's writing
// side (a half-close, as the peer did), or closes dst when src failed.
func forward(dst, src net.Conn) {
	buf := make([]byte, 32<<10)
	for {
		QuickAck(src)
		n, err := src.Read(buf)
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				src.Close()
				return
			}
		}
		if err != nil {
			if tc, ok := dst.(*net.TCPConn); ok && errors.Is(err, io.EOF) {
				tc.CloseWrite()
			} else {
				dst.Close()
			}
			return
		}
	}
}

// Close stops accepting, closes every forwarded connection and waits
// until their goroutines have ended.
func (f *Front) Close() {
	f.l.Close()
	f.mu.Lock()
	f.closed = true
	for c := range f.conns {
		c.Close()
	}
	f.mu.Unlock()
	f.wg.Wait()
}
