//go:build !linux

package testproc

import (
	"errors"
	"net"
)

var errUnsupported = errors.New("testproc: listing descendants is implemented for Linux only")

func adoptOrphans() error { return errUnsupported }

// Leftovers is not implemented outside Linux.
func Leftovers() ([]Proc, error) { return nil, errUnsupported }

func kill([]Proc) {}

const memoryDir = ""

func memoryFS(string) bool { return false }

// quickAck is a no-op outside Linux.
func quickAck(*net.TCPConn) {}
