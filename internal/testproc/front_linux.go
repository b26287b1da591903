package testproc

import (
	"net"
	"syscall"
)

// quickAck makes c acknowledge the next segment it receives at once
// (Linux clears TCP_QUICKACK again on its own, so it is set per read).
func quickAck(c net.Conn) {
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
