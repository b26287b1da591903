package testproc

import (
	"net"
	"syscall"
)

// QuickAck makes c acknowledge the next segment it receives at once
// (Linux clears TCP_QUICKACK again on its own: call it before each read).
// Front does so; a test's own proxy can too. It does nothing where
// TCP_QUICKACK is not supported, or when c is not a TCP connection.
func QuickAck(c net.Conn) {
	tc, ok := c.(*net.TCPConn)
	if !ok {
		return
	}
	if rc, err := tc.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) {
			syscall.SetsockoptInt(int(fd), syscall.IPPROTO_TCP, syscall.TCP_QUICKACK, 1)
		})
	}
}
