package main

// Tests of what a terminal sees: progress lines (only on a terminal, never
// piped or with --json) and Ctrl-C during long reads. They run readproof
// under a pseudo-terminal (github.com/creack/pty).

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/readproof/readproof/internal/testsize"
)

// bigRun makes a project whose run "big" mounts docs large documents, each
// repeats times, so that replaying it reads docs*repeats*size bytes.
func bigRun(t *testing.T, docs, repeats, size int) string {
	t.Helper()
	dir, uris := project(t, docs, size)
	toml := filepath.Join(dir, "readproof.toml")
	data, err := os.ReadFile(toml)
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.Replace(data, []byte("version = 1\n"), []byte(fmt.Sprintf("version = 1\n\n[defaults]\nmax_bytes = %d\n", 2*size)), 1)
	if err := os.WriteFile(toml, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"run", "--id", "big"}
	for r := 0; r < repeats; r++ {
		args = append(args, uris...)
	}
	mustRP(t, dir, args...)
	return dir
}

// ptyOutput collects what a command writes to a pseudo-terminal.
type ptyOutput struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	seen chan struct{} // closed when want first appears
	want string
	done chan struct{}
}

func (p *ptyOutput) String() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.buf.String()
}

// startOnPty starts readproof ARGS in dir with stderr on a new
// pseudo-terminal (stdout to stdout, a file or nil) and collects stderr;
// want, when seen on the terminal, closes seen.
func startOnPty(t *testing.T, dir string, stdout io.Writer, want string, args ...string) (*exec.Cmd, *ptyOutput) {
	t.Helper()
	return startOnPtyEnv(t, dir, nil, stdout, want, args...)
}

// startOnPtyEnv is startOnPty with env added to the command's environment.
func startOnPtyEnv(t *testing.T, dir string, env []string, stdout io.Writer, want string, args ...string) (*exec.Cmd, *ptyOutput) {
	t.Helper()
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	cmd := exec.Command("readproof", args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG="), env...)
	cmd.Stdout = stdout
	cmd.Stderr = tty
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	tty.Close()
	out := &ptyOutput{seen: make(chan struct{}), want: want, done: make(chan struct{})}
	go func() {
		defer close(out.done)
		b := make([]byte, 4096)
		closed := false
		for {
			n, err := ptmx.Read(b)
			out.mu.Lock()
			out.buf.Write(b[:n])
			if !closed && want != "" && strings.Contains(out.buf.String(), want) {
				close(out.seen)
				closed = true
			}
			out.mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	return cmd, out
}

func exitCode(err error) int {
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode()
	}
	if err != nil {
		return -1
	}
	return 0
}

// TestSIGINTStopsLongReads (issue 15): SIGINT during a long replay,
// evidence export and evidence verify exits 130 within a second and writes
// no output file. The signal is sent once the command's progress line shows
// that it is in its loop, under a pseudo-terminal.
func TestSIGINTStopsLongReads(t *testing.T) {
	requireGit(t)
	t.Parallel()
	// small: 60 entries of 2 MiB; full: 12 entries of 32 MiB (a replay
	// holds every entry's bytes in memory)
	size := testsize.Pick(t, 2<<20, 32<<20)
	repeats := 10
	if testsize.Long() {
		repeats = 4
	}
	dir := bigRun(t, 3, repeats, size)
	mustRP(t, dir, "evidence", "export", "big", "--out", "bundle.json")

	for _, tc := range []struct {
		name, progress string
		args           []string
		out            string // a file the command must not leave behind
	}{
		{"replay", "replay: ", []string{"replay", "big"}, "replayed.bin"},
		{"evidence export", "evidence export: ", []string{"evidence", "export", "big", "--with-content", "--out", "export.json"}, "export.json"},
		{"evidence verify", "evidence verify: ", []string{"evidence", "verify", "bundle.json"}, ""},
	} {
		t.Run(strings.ReplaceAll(tc.name, " ", "_"), func(t *testing.T) {
			// On a loaded machine the loop can end between the progress
			// line this test waits for and the signal: the command is
			// then past what the test checks (replay writing out what it
			// verified). The final count on the terminal tells: the loop
			// reached its end, so the signal did not stop it; try again.
			for attempt := 1; ; attempt++ {
				if !sigintDuringLoop(t, dir, tc.progress, tc.args, tc.out, tc.name) {
					return
				}
				if attempt == 3 {
					t.Fatalf("%s finished its loop after SIGINT was sent, %d times: SIGINT does not stop the loop, or the machine is too busy for this test", tc.name, attempt)
				}
				t.Logf("%s finished its loop before SIGINT arrived; again", tc.name)
			}
		})
	}
}

// loopFinished matches a progress line's count when the loop has reached
// its end (progress.Line draws the last update always).
var loopFinished = regexp.MustCompile(`: (\d+)/(\d+) `)

// finalCountShown reports whether the terminal shows a progress line whose
// count reached its total.
func finalCountShown(term string) bool {
	for _, m := range loopFinished.FindAllStringSubmatch(term, -1) {
		if m[1] == m[2] {
			return true
		}
	}
	return false
}

// sigintDuringLoop runs one command of TestSIGINTStopsLongReads, sends
// SIGINT once its progress line shows and checks what it left; raced is
// true (and nothing checked) when the loop had reached its end before the
// signal could stop it.
func sigintDuringLoop(t *testing.T, dir, progress string, args []string, outFile, name string) (raced bool) {
	t.Helper()
	var stdout io.Writer
	if outFile == "replayed.bin" {
		f, err := os.Create(filepath.Join(dir, outFile))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		stdout = f
	} else if outFile != "" {
		os.Remove(filepath.Join(dir, outFile))
	}
	cmd, out := startOnPty(t, dir, stdout, progress, args...)
	select {
	case <-out.seen:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("no progress line %q within 60 s; the terminal shows %q", progress, out.String())
	}
	sent := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatalf("the command ended before the signal: %v", err)
	}
	err := cmd.Wait()
	took := time.Since(sent)
	<-out.done
	if finalCountShown(out.String()) {
		return true
	}
	if code := exitCode(err); code != 130 {
		t.Fatalf("exit %d after SIGINT, want 130; terminal: %q", code, out.String())
	}
	// An interruption test: it ended because of the signal (exit 130,
	// "interrupted", below) while still working; the wall bound is wide,
	// for loaded machines.
	if took > 10*time.Second {
		t.Errorf("exited %v after SIGINT, want within 10 s", took)
	}
	t.Logf("%s: exit 130 %v after SIGINT", name, took.Round(time.Millisecond))
	if !strings.Contains(out.String(), "interrupted") {
		t.Errorf("stderr does not say it was interrupted: %q", out.String())
	}
	if outFile == "replayed.bin" {
		if st, err := os.Stat(filepath.Join(dir, outFile)); err != nil || st.Size() != 0 {
			t.Errorf("replay wrote %d bytes to stdout before stopping", st.Size())
		}
	} else if outFile != "" {
		if _, err := os.Stat(filepath.Join(dir, outFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s exists after the interrupted export", outFile)
		}
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp-*"))
	if len(left) > 0 {
		t.Errorf("temporary files left behind: %v", left)
	}
	return false
}

// TestProgressOnlyOnATerminal (issue 15): a long replay, evidence export
// and verify draw a progress line on a terminal's stderr, and never when
// stderr is a pipe or --json asks for machine output.
func TestProgressOnlyOnATerminal(t *testing.T) {
	requireGit(t)
	t.Parallel()
	dir := bigRun(t, 2, 3, 64<<10)
	mustRP(t, dir, "run", "start", "open")
	d0, d1 := "readproof://bench/docs/d0000", "readproof://bench/docs/d0001"
	for _, args := range [][]string{
		{"replay", "--no-content", "big"},
		{"evidence", "export", "big", "--out", "b.json"},
		{"verify"},
		{"run", "mount", "open", d0, d1, d0, d1},
		{"gc"},
	} {
		name := strings.Join(args, " ")
		what := args[0]
		switch args[0] {
		case "evidence", "run":
			what = args[0] + " " + args[1]
		}
		// a terminal: the line is drawn (\r-updated, then erased); gc
		// shows git's own meter
		cmd, out := startOnPty(t, dir, nil, "", args...)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s on a terminal: %v\n%s", name, err, out.String())
		}
		<-out.done
		drawn := strings.Contains(out.String(), "\r\x1b[K"+what+": ")
		if what == "gc" {
			drawn = strings.Contains(out.String(), "objects:") && strings.Contains(out.String(), "\r")
		}
		if !drawn {
			t.Errorf("%s: no progress line on the terminal: %q", name, out.String())
		}
		// --json on a terminal: none
		cmd, out = startOnPty(t, dir, io.Discard, "", append([]string{"--json"}, args...)...)
		if err := cmd.Wait(); err != nil {
			t.Fatalf("%s --json: %v\n%s", name, err, out.String())
		}
		<-out.done
		if strings.Contains(out.String(), "\r") && (strings.Contains(out.String(), what+": ") || strings.Contains(out.String(), "objects:")) {
			t.Errorf("%s --json: progress on the terminal: %q", name, out.String())
		}
		// a pipe: none
		_, errs, err := rp(t, dir, args...)
		if err != nil {
			t.Fatalf("%s piped: %v\n%s", name, err, errs)
		}
		if strings.ContainsAny(errs, "\r\x1b") {
			t.Errorf("%s piped: progress bytes on stderr: %q", name, errs)
		}
	}
}

// TestPushProgressOnlyOnATerminal: push shows git's progress meter on a
// terminal, and neither piped nor with --json.
func TestPushProgressOnlyOnATerminal(t *testing.T) {
	requireGit(t)
	t.Parallel()
	dir := bigRun(t, 2, 1, 4<<10)
	for i, mode := range []string{"terminal", "json", "pipe"} {
		name := fmt.Sprintf("r%d", i)
		bare := filepath.Join(dir, name+".git")
		if out, err := exec.Command("git", "init", "-q", "--bare", bare).CombinedOutput(); err != nil {
			t.Fatalf("git init: %v\n%s", err, out)
		}
		mustRP(t, dir, "remote", "add", name, bare)
		var stderr string
		switch mode {
		case "terminal", "json":
			args := []string{"push", name}
			if mode == "json" {
				args = append([]string{"--json"}, args...)
			}
			cmd, out := startOnPty(t, dir, io.Discard, "", args...)
			if err := cmd.Wait(); err != nil {
				t.Fatalf("push on a terminal (%s): %v\n%s", mode, err, out.String())
			}
			<-out.done
			stderr = out.String()
		case "pipe":
			_, errs, err := rp(t, dir, "push", name)
			if err != nil {
				t.Fatalf("push piped: %v\n%s", err, errs)
			}
			stderr = errs
		}
		meter := strings.Contains(stderr, "objects:") && strings.Contains(stderr, "\r")
		if meter != (mode == "terminal") {
			t.Errorf("push, stderr %s: progress meter shown %v: %q", mode, meter, stderr)
		}
	}
}

// TestLockWaitShownOnATerminal (session 22): a write that found a lock held
// by another process waited up to the lock timeout without a word. After
// about a second it now says on a terminal's stderr which lock it waits
// for, how long it has been held and what comes at the end; never piped
// nor with --json.
func TestLockWaitShownOnATerminal(t *testing.T) {
	requireGit(t)
	t.Parallel()
	// Three stores, each with packed-refs.lock held, written to at once: on
	// a terminal, with --json on a terminal, and piped. The wait ends in
	// failure at 1.5s: past the notice, whatever the load. Three
	// documents: run --id draws its progress line, which the wait's line
	// must erase rather than run on from.
	var dirs, locks [3]string
	var uris [3][]string
	for i := range dirs {
		dirs[i], uris[i] = project(t, 3, 64)
		locks[i] = filepath.Join(dirs[i], ".readproof", "packed-refs.lock")
		if err := os.WriteFile(locks[i], nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"READPROOF_LOCK_TIMEOUT=1500ms", "READPROOF_STALE_LOCK_AGE=1h"}
	var wg sync.WaitGroup
	var piped string
	wg.Add(1)
	go func() {
		defer wg.Done()
		cmd := exec.Command("readproof", append([]string{"run", "--id", "r"}, uris[2]...)...)
		cmd.Dir = dirs[2]
		cmd.Env = append(append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG="), env...)
		var errb bytes.Buffer
		cmd.Stderr = &errb
		_ = cmd.Run()
		piped = errb.String()
	}()
	term, tout := startOnPtyEnv(t, dirs[0], env, io.Discard, "", append([]string{"run", "--id", "r"}, uris[0]...)...)
	js, jout := startOnPtyEnv(t, dirs[1], env, io.Discard, "", append([]string{"--json", "run", "--id", "r"}, uris[1]...)...)
	if err := term.Wait(); exitCode(err) != 1 {
		t.Errorf("run with packed-refs.lock held: %v, want exit 1", err)
	}
	_ = js.Wait()
	wg.Wait()
	<-tout.done
	<-jout.done
	want := "\r\x1b[Kreadproof: waiting for " + locks[0] + ", held by another git or readproof for "
	if got := tout.String(); !strings.Contains(got, want) || !strings.Contains(got, "more, then the command fails") || !strings.Contains(got, "run: 3/3 documents") {
		t.Errorf("a terminal's stderr:\n%s\nwant a line %q... then the command fails", got, want)
	}
	for name, got := range map[string]string{"--json": jout.String(), "piped": piped} {
		if strings.Contains(got, "waiting for") {
			t.Errorf("%s: stderr tells of the wait:\n%s", name, got)
		}
		if !strings.Contains(got, "still held") {
			t.Errorf("%s: stderr:\n%s\nwant the lock's error: the test proves nothing", name, got)
		}
	}
}

// TestEveryLockWaitShownOnATerminal (session 23): exec's check that its
// receipt can be stored (its preflight, also mcp's), resource add's
// policy-file lock and mcp token add's token-file lock waited for a held
// lock without a word, the last two for a fixed 5s and 10s that
// READPROOF_LOCK_TIMEOUT did not change. Each now says,
// after the one notice every lock wait has, which lock it waits for and
// what comes at the end, on a terminal only; piped, the error that ends
// the wait names the lock and says how to free it.
func TestEveryLockWaitShownOnATerminal(t *testing.T) {
	requireGit(t)
	t.Parallel()
	env := []string{"READPROOF_LOCK_TIMEOUT=1500ms", "READPROOF_STALE_LOCK_AGE=1h"}
	type waitCase struct {
		name, dir, lock string
		env, args       []string
	}
	var cases []waitCase
	{
		dir, _ := project(t, 1, 16)
		key := []string{"READPROOF_RECEIPTS_KEY=" + filepath.Join(t.TempDir(), "receipts.key")}
		if _, errs, err := rpEnv(t, dir, key, "receipts", "key", "init"); err != nil {
			t.Fatalf("receipts key init: %v\n%s", err, errs)
		}
		lock := filepath.Join(dir, ".readproof", "packed-refs.lock")
		cases = append(cases, waitCase{"exec", dir, lock, key, []string{"exec", "--session", "s1", "true"}})
	}
	{
		dir, _ := project(t, 1, 16)
		if err := os.WriteFile(filepath.Join(dir, "docs", "new.md"), []byte("new\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, "readproof.toml.lock")
		cases = append(cases, waitCase{"resource add", dir, lock, nil, []string{"resource", "add", "readproof://bench/docs/new", "--source-type", "filesystem", "--path", "docs/new.md"}})
	}
	{
		dir, _ := project(t, 1, 16)
		config := t.TempDir()
		lock := filepath.Join(config, "readproof", "mcp-tokens.json.lock")
		if err := os.MkdirAll(filepath.Dir(lock), 0o700); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, waitCase{"mcp token add", dir, lock, []string{"XDG_CONFIG_HOME=" + config}, []string{"mcp", "token", "add", "ci-bot"}})
	}
	for _, c := range cases {
		if err := os.WriteFile(c.lock, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// on a terminal and piped at once, each waiting for the lock
			start := time.Now()
			env := append(append([]string(nil), env...), c.env...)
			term, tout := startOnPtyEnv(t, c.dir, env, io.Discard, "", c.args...)
			cmd := exec.Command("readproof", c.args...)
			cmd.Dir = c.dir
			cmd.Env = append(append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG="), env...)
			var errb bytes.Buffer
			cmd.Stderr = &errb
			perr := cmd.Run()
			err := term.Wait()
			<-tout.done
			took := time.Since(start)
			if exitCode(err) == 0 || exitCode(perr) == 0 {
				t.Errorf("%s with %s held: %v, piped %v: want a failure", c.name, c.lock, err, perr)
			}
			// A timeout test: each failed because of the lock timeout
			// (the error names the lock, below); the wall bound, 20
			// times the timeout, is for loaded machines.
			if took > 30*time.Second {
				t.Errorf("%s: waited %s for a lock timeout of 1.5s", c.name, took)
			}
			want := "\r\x1b[Kreadproof: waiting for " + c.lock
			if got := tout.String(); !strings.Contains(got, want) || !strings.Contains(got, "more, then the command fails") {
				t.Errorf("%s: a terminal's stderr:\n%s\nwant a line %q... then the command fails", c.name, got, want)
			}
			got := errb.String()
			if strings.Contains(got, "waiting for") {
				t.Errorf("%s piped: stderr tells of the wait:\n%s", c.name, got)
			}
			if !strings.Contains(got, c.lock) || !strings.Contains(got, "rm "+c.lock) {
				t.Errorf("%s piped: stderr:\n%s\nwant the error to name %s and how to remove it", c.name, got, c.lock)
			}
		}()
	}
	wg.Wait()
}
