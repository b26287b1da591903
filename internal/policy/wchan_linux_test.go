package policy

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// wchanShowsPipeWait reports whether this system's /proc/self/task/*/wchan
// names the kernel's wait for a named pipe's other end (wait_for_partner),
// which TestOpenRefusesNamedPipe looks for: a thread of this test is put in
// that wait (a blocking open of a named pipe), and its wchan is read
// once the thread sleeps in openat (/proc/self/task/TID/syscall): a kernel
// whose wchan names no wait ("0") or another would have the test wait for
// ever on an open that waits, instead of failing, so the test is skipped
// there. The thread is let go before this returns.
func wchanShowsPipeWait(t *testing.T) bool {
	path := filepath.Join(t.TempDir(), "probe")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		return false
	}
	tids := make(chan int, 1)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		tids <- syscall.Gettid()
		if f, err := os.OpenFile(path, os.O_RDONLY, 0); err == nil { // waits for a writer
			f.Close()
		}
	}()
	task := "/proc/self/task/" + strconv.Itoa(<-tids)
	defer func() {
		// the writer that lets the probe's open go: ENXIO until it opens
		for {
			w, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0)
			if err == nil {
				w.Close()
				break
			}
			if !errors.Is(err, syscall.ENXIO) {
				t.Fatal(err)
			}
			runtime.Gosched()
		}
		<-opened
	}()
	for {
		// the probe is in its open once it sleeps in openat
		sc, err := os.ReadFile(task + "/syscall")
		st, serr := os.ReadFile(task + "/stat")
		if err != nil || serr != nil {
			return false
		}
		// the state follows the command name's closing parenthesis
		i := strings.LastIndexByte(string(st), ')')
		if f := strings.Fields(string(sc)); len(f) > 0 && f[0] == strconv.Itoa(syscall.SYS_OPENAT) && i >= 0 && strings.HasPrefix(string(st[i+1:]), " S") {
			w, err := os.ReadFile(task + "/wchan")
			return err == nil && strings.Contains(string(w), "wait_for_partner")
		}
		runtime.Gosched()
	}
}
