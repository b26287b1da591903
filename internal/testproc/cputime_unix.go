//go:build unix

package testproc

import (
	"syscall"
	"time"
)

// CPUTime is the CPU time (user + system) this process used so far, so a
// benchmark can report its cost apart from the machine's load.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
