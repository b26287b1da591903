package lockfile_test

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
)

// stopSelf says "created" and stops this process (SIGSTOP, to this
// thread, so that it stops here) until the test continues it.
func stopSelf(string) {
	fmt.Println("created")
	runtime.LockOSThread()
	syscall.Tgkill(os.Getpid(), syscall.Gettid(), syscall.SIGSTOP)
	runtime.UnlockOSThread()
}
