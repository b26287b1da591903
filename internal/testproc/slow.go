package testproc

import (
	"io"
	"net"
	"sync"
	"time"
)

// SlowFront forwards the TCP connections it accepts on 127.0.0.1 to
// target, sending target's answers chunk bytes each pause (what a client
// sends goes at once), so that a large answer arrives over seconds. It
// returns its address and a function that stops it and waits for its
// connections to end.
func SlowFront(target string, chunk int, pause time.Duration) (addr string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	var wg sync.WaitGroup
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				slowForward(c, target, chunk, pause)
			}()
		}
	}()
	return l.Addr().String(), func() { l.Close(); wg.Wait() }, nil
}

func slowForward(c net.Conn, target string, chunk int, pause time.Duration) {
	defer c.Close()
	s, err := net.Dial("tcp", target)
	if err != nil {
		return
	}
	defer s.Close()
	go func() {
		io.Copy(s, c)
		if tc, ok := s.(*net.TCPConn); ok {
			tc.CloseWrite()
		}
	}()
	buf := make([]byte, chunk)
	for {
		n, err := s.Read(buf)
		if n > 0 {
			if _, werr := c.Write(buf[:n]); werr != nil {
				return
			}
			time.Sleep(pause)
		}
		if err != nil {
			return
		}
	}
}
