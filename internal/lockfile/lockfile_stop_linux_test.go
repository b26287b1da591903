package lockfile_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/lockfile"
)

// holder is the test binary run as a holder of one lock (holdEnv).
type holder struct {
	cmd    *exec.Cmd
	stdin  interface{ Close() error }
	stdout *bufio.Reader
	stderr bytes.Buffer
}

// startHolder starts a holder of lock and returns once it holds it.
func startHolder(t *testing.T, lock string) *holder {
	t.Helper()
	return startHolderSaying(t, lock, "held")
}

// startHolderSaying starts a holder of lock and returns once it has said
// first (with env as well).
func startHolderSaying(t *testing.T, lock, first string, env ...string) *holder {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skip(err)
	}
	h := &holder{cmd: exec.Command(exe, "-test.run=^$")}
	h.cmd.Env = append(append(os.Environ(), holdEnv+"="+lock), env...)
	h.cmd.Stderr = &h.stderr
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if h.cmd.ProcessState == nil {
			h.cmd.Process.Kill()
			h.cmd.Wait()
		}
	})
	h.stdout = bufio.NewReader(out)
	if line, _ := h.stdout.ReadString('\n'); line != first+"\n" {
		h.cmd.Wait()
		t.Fatalf("the holder said %q, not %q (%s):\n%s", line, first, lock, h.stderr.String())
	}
	return h
}

// stop stops the holder (SIGSTOP, as Ctrl-Z or a debugger would) and waits
// until it is stopped (state T in /proc).
func (h *holder) stop(t *testing.T) {
	t.Helper()
	if err := h.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	h.stopped(t)
}

// stopped waits until the holder is stopped (state T in /proc).
func (h *holder) stopped(t *testing.T) {
	t.Helper()
	stat := filepath.Join("/proc", strconv.Itoa(h.cmd.Process.Pid), "stat")
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		b, err := os.ReadFile(stat)
		if err != nil {
			t.Fatal(err)
		}
		if f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:])); len(f) > 0 && f[0] == "T" {
			return
		}
	}
	t.Fatalf("the holder %d did not stop", h.cmd.Process.Pid)
}

func age(t *testing.T, path string) {
	t.Helper()
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
}

// TestStoppedHolderKeepsItsLock: a readproof stopped while it holds a lock
// (resource add, mcp token add) keeps it however old the lock grows: a
// waiter fails with ErrLocked saying a live process holds it, offering no
// rm, and the holder, continued, releases its own lock. Once the holder is
// killed, its lock is taken over as before.
func TestStoppedHolderKeepsItsLock(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "readproof.toml.lock")
	o := lockfile.Options{Timeout: 200 * time.Millisecond, StaleAge: time.Second, Holder: "another readproof", Task: "changing the policy file"}

	h := startHolder(t, lock)
	h.stop(t)
	age(t, lock) // as if it had been stopped an hour
	before, err := os.Lstat(lock)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lockfile.Acquire(lock, o)
	if err == nil {
		l.Release()
		t.Fatal("the lock of a stopped holder was taken over")
	}
	if !errors.Is(err, lockfile.ErrLocked) || !strings.Contains(err.Error(), "by a live process") || strings.Contains(hint.Of(err), "rm ") {
		t.Errorf("the waiter's error: %v\nhint: %s\nwant ErrLocked saying a live process holds the lock, offering no rm", err, hint.Of(err))
	}
	if err := lockfile.Probe(lock, o); !errors.Is(err, lockfile.ErrLocked) {
		t.Errorf("a probe of a stopped holder's old lock: %v, want ErrLocked", err)
	}
	if now, err := os.Lstat(lock); err != nil || !os.SameFile(now, before) {
		t.Fatalf("the stopped holder's lock %s was replaced (%v)", lock, err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	h.stdin.Close()
	if err := h.cmd.Wait(); err != nil {
		t.Fatalf("the holder, continued: %v\n%s", err, h.stderr.String())
	}
	leftovers(t, dir)

	// killed, its lock is taken over once stale
	h = startHolder(t, lock)
	h.cmd.Process.Kill()
	h.cmd.Wait()
	age(t, lock)
	l, err = lockfile.Acquire(lock, o)
	if err != nil {
		t.Fatalf("the lock of a killed holder: %v, want it taken over", err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
}

// TestStoppedBeforeItsFlock: a readproof stopped between the create of its
// lock file and the take of its flock, for longer than the stale age,
// loses the lock to a waiter, who takes a new one; continued, it finds its
// file gone from the path once it has the flock, does not take the
// waiter's lock for its own, and waits for it like any other.
func TestStoppedBeforeItsFlock(t *testing.T) {
	dir := t.TempDir()
	lock := filepath.Join(dir, "mcp-tokens.json.lock")
	h := startHolderSaying(t, lock, "created", holdEnv+"_STOP=1")
	h.stopped(t) // it stops itself (a SIGSTOP from here could come before its own, and the SIGCONT between them)
	age(t, lock)
	l, err := lockfile.Acquire(lock, lockfile.Options{Timeout: time.Minute, StaleAge: time.Second})
	if err != nil {
		t.Fatalf("a lock an hour old whose flock nobody holds: %v, want it taken over", err)
	}
	mine, err := os.Lstat(lock)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.cmd.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	h.stdin.Close()
	rest, _ := io.ReadAll(h.stdout)
	err = h.cmd.Wait()
	if strings.Contains(string(rest), "held") || err == nil {
		t.Errorf("the writer stopped before its flock, continued, took the lock another holds (said %q, %v)", rest, err)
	} else if !strings.Contains(h.stderr.String(), "by a live process") {
		t.Errorf("the writer stopped before its flock, continued: %v\n%s\nwant ErrLocked saying a live process holds the lock", err, h.stderr.String())
	}
	if now, err := os.Lstat(lock); err != nil || !os.SameFile(now, mine) {
		t.Errorf("the waiter's lock %s was replaced (%v)", lock, err)
	}
	if err := l.Release(); err != nil {
		t.Fatal(err)
	}
	leftovers(t, dir)
}
