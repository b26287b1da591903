//go:build linux

package gitstore

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// stopBeforeRename, set as beforeRename in a helper process, says where it
// stops ("paused <lock>") and stops the process, as a debugger, Ctrl-Z or
// a paused virtual machine would, until the test continues it. The signal
// goes to this thread (tgkill): sent to the process, another thread may
// take it while this one runs on into the rename.
func stopBeforeRename(lock string) {
	fmt.Fprintln(os.Stdout, "paused", lock)
	stopHere()
}

// stopAfterCreate, set as afterCreate in a helper process, says where it
// stops ("created <lock>") and stops the process between the create of its
// first lock and its flock, until the test continues it.
func stopAfterCreate(lock string) {
	afterCreate = nil
	fmt.Fprintln(os.Stdout, "created", lock)
	stopHere()
}

func stopHere() {
	runtime.LockOSThread()
	syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
	runtime.UnlockOSThread()
}
