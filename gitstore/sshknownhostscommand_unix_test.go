//go:build unix

package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// backgroundCommand writes a KnownHostsCommand script in dir that prints a
// comment, starts a sleep in the background holding its output, writes
// the sleep's process id to the file it returns, then runs tail (wait, or
// exit 0). The sleep is killed when the test ends, whatever happened.
func backgroundCommand(t *testing.T, dir, tail string) (*knownHostsCommand, string) {
	t.Helper()
	script, pidFile := filepath.Join(dir, "khbg"), filepath.Join(dir, "khbg.pid")
	body := "#!/bin/sh\necho '# listed'\n/bin/sleep 3600 &\necho $! > " + pidFile + ".tmp\nmv " + pidFile + ".tmp " + pidFile + "\n" + tail + "\n"
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if pid, err := readPid(pidFile); err == nil {
			syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	return &knownHostsCommand{st: setting{key: "KnownHostsCommand", value: script, file: filepath.Join(dir, "config"), line: 2},
		alias: "git.example.test", argv: []string{script}}, pidFile
}

func readPid(file string) (int, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// runBounded runs k, failing the test when the run has not returned by
// the time a run that waited on the background sleep would still be
// waiting (a guard against a hang, not a measure of speed).
func runBounded(t *testing.T, ctx context.Context, k *knownHostsCommand) ([]byte, error) {
	t.Helper()
	type result struct {
		out []byte
		err error
	}
	done := make(chan result, 1)
	go func() {
		out, err := k.run(ctx, commandKeyTokens{name: "git.example.test", invocation: "HOSTNAME"})
		done <- result{out, err}
	}()
	select {
	case r := <-done:
		return r.out, r.err
	case <-time.After(time.Minute):
		t.Fatal("the KnownHostsCommand's run still waits on the process it left in the background")
		return nil, nil
	}
}

// A KnownHostsCommand that exits and leaves a process holding its output
// does not hold the fetch until that process ends: the run ends, refused
// by name (what the command prints is not known in full). Before, the
// run read the output to its end, for as long as the process lived (an
// hour here), past the 30 s bound said.
func TestKnownHostsCommandLeavesAProcess(t *testing.T) {
	k, _ := backgroundCommand(t, t.TempDir(), "exit 0")
	_, err := runBounded(t, context.Background(), k)
	if err == nil || !strings.Contains(err.Error(), "KnownHostsCommand") || !strings.Contains(err.Error(), "left a process") {
		t.Errorf("%v, want the command refused for the process it left holding its output", err)
	}
}

// A KnownHostsCommand stopped (its context done: the 30 s bound, the
// fetch cancelled) is killed with the processes it started, and the run
// ends. Before, the command alone was killed: its child held the output
// and the run waited on it, for as long as it lived.
func TestKnownHostsCommandStoppedWithItsChildren(t *testing.T) {
	k, pidFile := backgroundCommand(t, t.TempDir(), "wait")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for {
			if _, err := os.Stat(pidFile); err == nil {
				cancel()
				return
			}
			if ctx.Err() != nil {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	_, err := runBounded(t, ctx, k)
	if err == nil {
		t.Fatal("a KnownHostsCommand cancelled: taken, want it refused")
	}
	pid, perr := readPid(pidFile)
	if perr != nil {
		t.Fatal(perr)
	}
	// SIGKILL takes the process at once but not in the same instant: it
	// is waited for to end (gone, or a zombie), for long enough that one
	// still there was not killed
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			break // gone (or no /proc here)
		}
		if i := strings.LastIndexByte(string(stat), ')'); i < 0 || strings.HasPrefix(string(stat[i+1:]), " Z") || strings.HasPrefix(string(stat[i+1:]), " X") {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("the command's child %d still runs after the command was stopped: %s", pid, stat)
			break
		}
	}
}
