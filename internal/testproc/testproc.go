package testproc

import (
	"fmt"
	"os"
	"time"
)

// TestingM is what *testing.M provides (and testscript.Main accepts).
type TestingM interface{ Run() int }

// Run runs m and returns its exit code, or 1 when a process the tests
// started is still running afterwards; those are listed on stderr and
// killed. Where the check is not supported it only runs m.
//
//	func TestMain(m *testing.M) { os.Exit(testproc.Run(m)) }
func Run(m TestingM) int {
	supported := adoptOrphans() == nil
	code := m.Run()
	if !supported {
		return code
	}
	// A process may still be on its way out (a killed server's children,
	// a detached git gc): give them a moment before naming them.
	var left []Proc
	var err error
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		left, err = Leftovers()
		if err != nil {
			fmt.Fprintf(os.Stderr, "testproc: cannot list processes: %v\n", err)
			return code
		}
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) == 0 {
		return code
	}
	fmt.Fprintf(os.Stderr, "FAIL: the tests left %d process(es) behind; end every server you start, with its process group:\n", len(left))
	for _, p := range left {
		fmt.Fprintf(os.Stderr, "\tpid %d: %s\n", p.PID, p.Cmdline)
	}
	kill(left)
	return 1
}

// Proc is a process the test binary started, directly or not.
type Proc struct {
	PID     int
	Cmdline string
}
