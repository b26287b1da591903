//go:build !unix

package receipts

import (
	"os/exec"
	"syscall"
)

func terminate(cmd *exec.Cmd) error { return cmd.Process.Kill() }

func signalName(s syscall.Signal) string { return "SIG" + itoa(int(s)) }
