//go:build unix

package testproc

import (
	"os/exec"
	"syscall"
)

// OwnGroup makes cmd start in a process group of its own, so that
// KillGroup ends it with every process it started (`git daemon` runs
// git-daemon as its child, which would otherwise outlive the test). Call
// it before cmd.Start.
func OwnGroup(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
}

// KillGroup sends SIGKILL to the process group OwnGroup gave a started
// cmd.
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
