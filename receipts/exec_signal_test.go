//go:build unix

package receipts

import (
	"bytes"
	"context"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// readyWriter reports on ready once the command printed "ready".
type readyWriter struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	ready chan struct{}
	once  sync.Once
}

func (w *readyWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), "ready") {
		w.once.Do(func() { close(w.ready) })
	}
	return len(p), nil
}

func (w *readyWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

func TestExecForwardsSignals(t *testing.T) {
	needSh(t)
	cases := []struct {
		name   string
		script string
		send   syscall.Signal
		exit   int
		signal string
		out    string
	}{
		// The exact signal reaches the command: a trap for USR1 runs, so
		// the signal was neither swallowed nor replaced by SIGTERM.
		{"trapped", `trap 'echo got-usr1; exit 7' USR1; echo ready; while :; do sleep 0.01; done`, syscall.SIGUSR1, 7, "", "ready\ngot-usr1\n"},
		{"killed", `echo ready; exec sleep 30`, syscall.SIGUSR2, 128 + int(syscall.SIGUSR2), "SIGUSR2", "ready\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out := &readyWriter{ready: make(chan struct{})}
			sigs := make(chan os.Signal, 1)
			go func() {
				select {
				case <-out.ready:
					sigs <- c.send
				case <-time.After(20 * time.Second):
				}
			}()
			// Without forwarding the command would run on; the deadline
			// then ends it with a SIGTERM the test reports as a failure.
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			res, err := Exec(ctx, ExecOptions{
				Argv: []string{"sh", "-c", c.script}, Stdout: out, Stderr: io.Discard, Signals: sigs, KillGrace: time.Second,
			})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if res.ExitCode != c.exit || res.Signal != c.signal {
				t.Errorf("exit %d signal %q; want %d %q", res.ExitCode, res.Signal, c.exit, c.signal)
			}
			if got := out.String(); got != c.out {
				t.Errorf("stdout %q, want %q", got, c.out)
			}
		})
	}
}

// A signal that arrives after the command ended is dropped, not delivered
// elsewhere, and Exec does not block on it.
func TestExecSignalsAfterExit(t *testing.T) {
	needSh(t)
	sigs := make(chan os.Signal, 1)
	res, err := Exec(context.Background(), ExecOptions{Argv: []string{"sh", "-c", "exit 4"}, Signals: sigs})
	if err != nil || res.ExitCode != 4 {
		t.Fatalf("Exec: exit %d, %v", res.ExitCode, err)
	}
	sigs <- syscall.SIGTERM // nobody reads it any more; must not block the test
}
