//go:build unix

package hint

import "syscall"

// openFilesLimit is this process's limit on open files (RLIMIT_NOFILE's
// soft limit, which Go raises to the hard one at start).
func openFilesLimit() (uint64, bool) {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return 0, false
	}
	return uint64(l.Cur), true
}
