//go:build unix

package receipts

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

func terminate(cmd *exec.Cmd) error { return cmd.Process.Signal(syscall.SIGTERM) }

// signalName returns "SIGKILL" style names, or "SIG<n>" for a signal without
// one.
func signalName(s syscall.Signal) string {
	if n := unix.SignalName(s); n != "" {
		return n
	}
	return "SIG" + itoa(int(s))
}
