//go:build !unix

package fspath

import "os"

// openNonblock: the platform has no O_NONBLOCK for an open.
const openNonblock = 0

func setBlocking(*os.File) error { return nil }

func handedPipe(_ *os.File, path string) bool { return handedPath(path) }
