//go:build !linux

package fspath

import "os"

// openLeased gives back err: only Linux has leases that make an
// O_NONBLOCK open fail with EWOULDBLOCK (lease_linux.go).
func openLeased(_ string, err error) (*os.File, error) { return nil, err }
