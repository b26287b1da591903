package receipts

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// ErrStart is wrapped by Exec's error when the command could not be started
// (not found, not executable); the result then has exit code 127.
var ErrStart = errors.New("command could not be started")

// ExitCannotStart is the exit code recorded for a command that could not be
// started, as a shell reports it.
const ExitCannotStart = 127

// ExecOptions configure Exec.
type ExecOptions struct {
	// Argv is the command and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Stdin is the command's standard input; nil means the null device.
	Stdin io.Reader
	// Stdout and Stderr receive the command's output byte for byte as it is
	// produced; nil discards (the output is still hashed).
	Stdout, Stderr io.Writer
	// Dir and Env are passed to the command; empty means the current
	// directory and environment.
	Dir string
	Env []string
	// KillGrace is how long a command may run after ctx is done and it was
	// sent SIGTERM, or keep its output open after it exited, before it is
	// killed and its pipes closed. Zero means 5 seconds.
	KillGrace time.Duration
	// Now is the clock for the start and end times; time.Now when nil.
	Now func() time.Time
	// Signals, when not nil, are forwarded to the running command as they
	// arrive, and Exec keeps waiting: a wrapper passes on the SIGTERM it
	// received and still records how the command ended.
	Signals <-chan os.Signal
}

// ExecResult is what Exec observed. It is complete even when Exec returns an
// error, so a receipt can always be issued.
type ExecResult struct {
	// ExitCode is the exit status; 128+N for a process killed by signal N;
	// 127 for a command that could not be started.
	ExitCode int
	// Signal is the name of the signal that killed the process ("SIGKILL"),
	// or "".
	Signal string
	// Err is why the command could not be started or its output not
	// delivered, or "".
	Err string
	// StdoutSHA256 and StderrSHA256 hash the bytes the command wrote.
	StdoutSHA256, StderrSHA256 Digest
	StdoutBytes, StderrBytes   int64
	Start, End                 time.Time
}

// Result is the command's Result for a receipt: the framed hash of stdout,
// stderr and the exit code, plus the exit code, signal and error in clear.
func (r ExecResult) Result() Result {
	res := commandResult(r.StdoutSHA256, r.StderrSHA256, r.ExitCode, r.Signal)
	if r.Err != "" {
		res = res.WithError(r.Err)
	}
	return res
}

// Exec runs a command, streaming its stdout and stderr through to
// opts.Stdout and opts.Stderr byte for byte while hashing them, and returns
// its outcome. When ctx is done the command gets SIGTERM, then SIGKILL after
// KillGrace.
//
// The result is always filled in. The error is non-nil when the command
// could not be started (wrapping ErrStart; exit code 127) or its output
// could not be delivered; a command that ran and failed is not an error.
func Exec(ctx context.Context, opts ExecOptions) (ExecResult, error) {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	so := &hashingWriter{h: sha256.New(), w: opts.Stdout}
	se := &hashingWriter{h: sha256.New(), w: opts.Stderr}
	res := ExecResult{Start: now().UTC()}
	finish := func() {
		res.End = now().UTC()
		if res.End.Before(res.Start) {
			res.End = res.Start
		}
		res.StdoutSHA256, res.StderrSHA256 = so.sum(), se.sum()
		res.StdoutBytes, res.StderrBytes = so.n, se.n
	}
	if len(opts.Argv) == 0 || opts.Argv[0] == "" {
		res.ExitCode, res.Err = ExitCannotStart, "empty command"
		finish()
		return res, fmt.Errorf("running a command: %w: empty command (give the command after --)", ErrStart)
	}
	grace := opts.KillGrace
	if grace <= 0 {
		grace = 5 * time.Second
	}
	cmd := exec.CommandContext(ctx, opts.Argv[0], opts.Argv[1:]...)
	cmd.Stdin = opts.Stdin
	cmd.Stdout, cmd.Stderr = so, se
	cmd.Dir, cmd.Env = opts.Dir, opts.Env
	cmd.Cancel = func() error { return terminate(cmd) }
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
		res.ExitCode = ExitCannotStart
		res.Err = cleanText(err.Error(), MaxErrorLen)
		finish()
		return res, fmt.Errorf("running %q: %w: %w", opts.Argv[0], ErrStart, err)
	}
	stopForwarding := forwardSignals(cmd.Process, opts.Signals)
	werr := cmd.Wait()
	stopForwarding()
	finish()
	ps := cmd.ProcessState
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		res.ExitCode = 128 + int(ws.Signal())
		res.Signal = signalName(ws.Signal())
	} else {
		res.ExitCode = ps.ExitCode()
	}
	var exitErr *exec.ExitError
	switch {
	case so.err != nil:
		werr = fmt.Errorf("delivering stdout: %w", so.err)
	case se.err != nil:
		werr = fmt.Errorf("delivering stderr: %w", se.err)
	case errors.As(werr, &exitErr):
		werr = nil
	}
	if werr != nil {
		res.Err = cleanText(werr.Error(), MaxErrorLen)
		return res, fmt.Errorf("running %q: %w", opts.Argv[0], werr)
	}
	return res, nil
}

// forwardSignals relays every signal from sigs to p until stop is called.
// A signal that arrives after p exited is dropped (os.Process refuses to
// signal a finished process, so no other process can receive it).
func forwardSignals(p *os.Process, sigs <-chan os.Signal) (stop func()) {
	if sigs == nil {
		return func() {}
	}
	done, finished := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(finished)
		for {
			select {
			case <-done:
				return
			case s := <-sigs:
				_ = p.Signal(s)
			}
		}
	}()
	return func() {
		close(done)
		<-finished
	}
}
