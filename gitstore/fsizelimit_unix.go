//go:build unix

package gitstore

import (
	"math"
	"syscall"
)

// fileSizeLimit is this process's soft limit on the size of a file it
// writes (`ulimit -f`), which git inherits; ok is false when there is none.
func fileSizeLimit() (n int64, ok bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &l); err != nil || l.Cur >= math.MaxInt64 { // RLIM_INFINITY: no limit
		return 0, false
	}
	return int64(l.Cur), true
}
