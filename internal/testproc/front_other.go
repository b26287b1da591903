//go:build !linux

package testproc

import (
	"net"
)

func quickAck(net.Conn) {}
