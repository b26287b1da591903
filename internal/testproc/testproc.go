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
//
// When TMPDIR is unset, Run also points it, for the tests and every
// process they start, at a fresh directory on a memory filesystem
// (/dev/shm on Linux) and removes that directory afterwards; see
// [MemoryScratch]. Set TMPDIR to keep the test files elsewhere. And it
// replaces the hard links of the test binary that testscript.Main puts on
// PATH with copies ([CopyLinkedExecutable]).
func Run(m TestingM) int {
	supported := adoptOrphans() == nil
	CopyLinkedExecutable()
	if dir, ok := MemoryScratch(); ok {
		os.Setenv("TMPDIR", dir)
		defer func() {
			os.RemoveAll(dir)
			os.Unsetenv("TMPDIR")
		}()
	}
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

// MemoryScratch makes a fresh directory for the tests' files on a memory
// filesystem when TMPDIR is unset and the system has one (/dev/shm as
// tmpfs on Linux), as on systems whose /tmp is tmpfs. The tests start
// thousands of git and readproof processes that create, fsync and delete
// small files; on a disk filesystem the fsyncs wait on the journal and
// each new inode costs a search past the recently deleted ones, which made
// up a third of the test run's CPU (ext4). The code under test makes the
// same calls either way; only their cost differs. ok is false when TMPDIR
// is set or there is no such filesystem: the tests then use os.TempDir.
func MemoryScratch() (dir string, ok bool) {
	if os.Getenv("TMPDIR") != "" || !memoryFS(memoryDir) {
		return "", false
	}
	dir, err := os.MkdirTemp(memoryDir, "readproof-test-")
	if err != nil {
		return "", false
	}
	// searchable by other users, as /tmp is: a test running a command as
	// another user (TestExecReadOnlyStore) keeps its tree below
	if err := os.Chmod(dir, 0o755); err != nil {
		os.Remove(dir)
		return "", false
	}
	return dir, true
}
