package receipts

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func needSh(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
}

func TestExecStreamsAndExitCodes(t *testing.T) {
	needSh(t)
	// Output with NULs, invalid UTF-8, CR and no trailing newline must pass
	// through unchanged.
	payload := "a\x00b\xff\xfe\r\nlast"
	printPayload := `printf 'a\000b\377\376\r\nlast'`
	cases := []struct {
		name     string
		script   string
		exit     int
		signal   string
		out, err string
	}{
		{"exit 0", `printf 'hello\n'; printf 'warn' >&2`, 0, "", "hello\n", "warn"},
		{"exit 3", printPayload + `; printf 'e\000rr' >&2; exit 3`, 3, "", payload, "e\x00rr"},
		{"sigkill", `printf before; kill -KILL $$; printf after`, 137, "SIGKILL", "before", ""},
		{"sigterm", `printf x >&2; kill -TERM $$`, 143, "SIGTERM", "", "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var so, se bytes.Buffer
			res, err := Exec(context.Background(), ExecOptions{
				Argv: []string{"sh", "-c", c.script}, Stdout: &so, Stderr: &se,
			})
			if err != nil {
				t.Fatalf("Exec: %v", err)
			}
			if res.ExitCode != c.exit || res.Signal != c.signal || res.Err != "" {
				t.Errorf("exit %d signal %q err %q; want %d %q", res.ExitCode, res.Signal, res.Err, c.exit, c.signal)
			}
			if so.String() != c.out || se.String() != c.err {
				t.Errorf("stdout %q stderr %q; want %q %q", so.String(), se.String(), c.out, c.err)
			}
			if res.StdoutSHA256 != sha256.Sum256([]byte(c.out)) || res.StderrSHA256 != sha256.Sum256([]byte(c.err)) ||
				res.StdoutBytes != int64(len(c.out)) || res.StderrBytes != int64(len(c.err)) {
				t.Error("hashes or byte counts do not match the streamed bytes")
			}
			want := CommandResult([]byte(c.out), []byte(c.err), c.exit, c.signal)
			got := res.Result()
			if got.SHA256() != want.SHA256() || *got.exitCode != c.exit || got.signal != c.signal {
				t.Errorf("Result() does not match CommandResult of the same outcome")
			}
			if res.End.Before(res.Start) || res.Start.Location() != time.UTC {
				t.Errorf("times %v .. %v", res.Start, res.End)
			}
		})
	}
}

func TestExecLargeOutput(t *testing.T) {
	needSh(t)
	var so bytes.Buffer
	// 4 MiB through the pipe, larger than any pipe buffer.
	res, err := Exec(context.Background(), ExecOptions{
		Argv: []string{"sh", "-c", "head -c 4194304 /dev/zero | tr '\\0' 'x'"}, Stdout: &so,
	})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("Exec: %v, exit %d", err, res.ExitCode)
	}
	want := strings.Repeat("x", 4<<20)
	if so.String() != want || res.StdoutSHA256 != sha256.Sum256([]byte(want)) {
		t.Errorf("4 MiB of output: got %d bytes", so.Len())
	}
}

func TestExecStdin(t *testing.T) {
	needSh(t)
	var so bytes.Buffer
	res, err := Exec(context.Background(), ExecOptions{Argv: []string{"cat"}, Stdin: strings.NewReader("in\x00put"), Stdout: &so})
	if err != nil || res.ExitCode != 0 || so.String() != "in\x00put" {
		t.Errorf("cat: %v exit %d out %q", err, res.ExitCode, so.String())
	}
}

func TestExecCannotStart(t *testing.T) {
	for _, argv := range [][]string{{"readproof-no-such-command-xyz", "a"}, {"/"}, nil, {""}} {
		res, err := Exec(context.Background(), ExecOptions{Argv: argv})
		if !errors.Is(err, ErrStart) {
			t.Errorf("%q: err = %v, want ErrStart", argv, err)
		}
		if res.ExitCode != ExitCannotStart || res.Err == "" || res.Start.IsZero() || res.End.IsZero() {
			t.Errorf("%q: result %+v, want exit 127 with an error message and times", argv, res)
		}
		if r := res.Result(); r.err == "" || *r.exitCode != 127 {
			t.Errorf("%q: Result() loses the error or the exit code", argv)
		}
	}
}

func TestExecContextCancel(t *testing.T) {
	t.Parallel()
	needSh(t)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	// The shell ignores SIGTERM, so the grace period ends with SIGKILL.
	res, _ := Exec(ctx, ExecOptions{Argv: []string{"sh", "-c", "trap '' TERM; while :; do sleep 0.05; done"}, KillGrace: 300 * time.Millisecond})
	if res.ExitCode != 137 || res.Signal != "SIGKILL" {
		t.Errorf("cancelled command: exit %d signal %q, want 137 SIGKILL", res.ExitCode, res.Signal)
	}
	// A cancellation test: the command ended because of the cancel and
	// the grace period (SIGKILL, exit 137); the shell loops forever, and
	// the wall bound is wide, for loaded machines.
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("cancel took %v", d)
	}
	ctx2, cancel2 := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel2()
	res, _ = Exec(ctx2, ExecOptions{Argv: []string{"sleep", "10"}})
	if res.ExitCode != 143 || res.Signal != "SIGTERM" {
		t.Errorf("cancelled sleep: exit %d signal %q, want 143 SIGTERM", res.ExitCode, res.Signal)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	w.n += len(p)
	return 0, errors.New("consumer gone")
}

func TestExecBrokenConsumer(t *testing.T) {
	needSh(t)
	// A consumer that fails behaves like a closed pipe: the command is not
	// left blocked, Exec reports the error and the result is still filled.
	res, err := Exec(context.Background(), ExecOptions{
		Argv: []string{"sh", "-c", "while :; do echo y || exit 9; done"}, Stdout: &failWriter{},
	})
	if err == nil || res.Err == "" {
		t.Errorf("Exec with a failing stdout: err %v, result err %q", err, res.Err)
	}
	if res.ExitCode == 0 || res.End.IsZero() {
		t.Errorf("result %+v", res)
	}
}
