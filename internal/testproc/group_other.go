//go:build !unix

package testproc

import "os/exec"

// OwnGroup does nothing where there are no process groups.
func OwnGroup(*exec.Cmd) {}

// KillGroup kills the process cmd started (only it: there are no process
// groups here).
func KillGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		cmd.Process.Kill()
	}
}
