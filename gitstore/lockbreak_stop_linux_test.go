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
	runtime.LockOSThread()
	syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
	runtime.UnlockOSThread()
}
