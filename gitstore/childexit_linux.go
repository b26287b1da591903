package gitstore

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
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

// killsItsChildren has a cancelled cmd (its context done: a fetch past
// MaxFetchBytes, a timeout, Ctrl-C) killed with the processes it started,
// not alone: git fetch hands a remote that offers no side-band the
// connection itself, and index-pack, its child, reads the pack from it
// and writes it; killed alone, git fetch left index-pack writing on past
// the bound, into a temporary pack already removed, for as long as the
// remote sent. Git and each process found under it are stopped
// (SIGSTOP: none starts another) before all are killed. git keeps its
// process group, so it still reads a password from the terminal.
func killsItsChildren(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if err := cmd.Process.Signal(syscall.SIGSTOP); err != nil {
			return cmd.Process.Kill()
		}
		tree := map[int]bool{cmd.Process.Pid: true}
		for grew := true; grew; {
			grew = false
			for pid, parent := range parents() {
				if tree[parent] && !tree[pid] {
					syscall.Kill(pid, syscall.SIGSTOP)
					tree[pid], grew = true, true
				}
			}
		}
		for pid := range tree {
			if pid != cmd.Process.Pid {
				syscall.Kill(pid, syscall.SIGKILL)
			}
		}
		return cmd.Process.Kill()
	}
}

// parents maps each process's id to its parent's, from /proc/PID/stat.
func parents() map[int]int {
	out := map[int]int{}
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + p.Name() + "/stat")
		if err != nil {
			continue
		}
		// "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(stat[i+1:]))
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			out[pid] = ppid
		}
	}
	return out
}
