package gitstore

import (
	"os/exec"
	"syscall"
)

// endsWithUs has the kernel kill cmd's process (SIGKILL) when this process
// ends, killed too: a git copying or fetching into a store being made
// (index-pack handed a source's pack file reads it to its end) would
// otherwise go on writing beside the target after the clone was killed.
// (The signal follows the thread that started git; Go ends no thread of a
// program that never locks one, as readproof does not.)
func endsWithUs(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
}
