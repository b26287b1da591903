package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/readproof/readproof/internal/testsize"
	"github.com/readproof/readproof/receipts"
)

// Tool receipts through the real binary (issue 7): each readproof call is a
// separate process, so every check here is made by a process started after
// the one that issued the receipt.

// exitsCmd runs a command and checks its exact exit status, keeping its
// stdout and stderr for the next commands: `exits N COMMAND [ARGS...]`.
func exitsCmd(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: exits N COMMAND [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	if err != nil {
		ts.Fatalf("exits: %q is not an exit status", args[0])
	}
	err = ts.Exec(args[1], args[2:]...)
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		ts.Fatalf("exits: %v", err)
	}
	if got != want {
		ts.Fatalf("%s exited with status %d, want %d", args[1], got, want)
	}
}

// receiptsProject is an initialised store in dir/proj with a receipt key
// outside it; env carries the key and a private config directory.
type receiptsProject struct {
	dir, proj, store, key string
	env                   []string
}

func newReceiptsProject(t testing.TB) *receiptsProject {
	t.Helper()
	requireGit(t)
	dir := t.TempDir()
	p := &receiptsProject{dir: dir, proj: filepath.Join(dir, "proj"), key: filepath.Join(dir, "keys", "receipts.key")}
	p.store = filepath.Join(p.proj, ".readproof")
	p.env = append(os.Environ(), "READPROOF_STORE=", "READPROOF_CONFIG=",
		"XDG_CONFIG_HOME="+filepath.Join(dir, "config"), "READPROOF_RECEIPTS_KEY="+p.key)
	if err := os.MkdirAll(p.proj, 0o755); err != nil {
		t.Fatal(err)
	}
	p.must(t, "init")
	p.must(t, "receipts", "key", "init")
	return p
}

// run runs readproof in the project and returns stdout, stderr and the
// exit status.
func (p *receiptsProject) run(t testing.TB, stdin []byte, args ...string) ([]byte, []byte, int) {
	t.Helper()
	cmd := exec.Command("readproof", args...)
	cmd.Dir, cmd.Env = p.proj, p.env
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		return out.Bytes(), errb.Bytes(), ee.ExitCode()
	case err != nil:
		t.Fatalf("readproof %s: %v", strings.Join(args, " "), err)
	}
	return out.Bytes(), errb.Bytes(), 0
}

func (p *receiptsProject) must(t testing.TB, args ...string) []byte {
	t.Helper()
	out, errb, code := p.run(t, nil, args...)
	if code != 0 {
		t.Fatalf("readproof %s: exit %d\n%s", strings.Join(args, " "), code, errb)
	}
	return out
}

type listedReceipt struct {
	ID       string `json:"id"`
	Session  string `json:"session"`
	Tool     string `json:"tool"`
	Args     string `json:"args_sha256"`
	Result   string `json:"result_sha256"`
	ExitCode *int   `json:"exit_code"`
	Signal   string `json:"signal"`
	Error    string `json:"error"`
	Check    string `json:"check"`
}

func (p *receiptsProject) list(t testing.TB, session string) []listedReceipt {
	t.Helper()
	var out []listedReceipt
	if err := json.Unmarshal(p.must(t, "receipts", "list", "--json", session), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func (p *receiptsProject) verify(t testing.TB, session string, claims []string) receipts.JSON {
	t.Helper()
	in, _ := json.Marshal(claims)
	out, errb, code := p.run(t, in, "receipts", "verify-claims", "--json", "--session", session, "-")
	if code != 0 {
		t.Fatalf("verify-claims: exit %d\n%s", code, errb)
	}
	var rep receipts.JSON
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// Acceptance 2: 8 processes issuing 100 receipts each at once lose none
// (4 each unless READPROOF_LONG_TESTS=1: still 8 processes appending to one
// session at once, 32 receipts),
// and a later process verifies every one of them.
func TestReceiptsManyProcesses(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	if testing.Short() {
		t.Skip("slow: 800 readproof processes")
	}
	t.Parallel()
	p := newReceiptsProject(t)
	const procs = 8
	each := testsize.Pick(t, 4, 100)
	if err := os.WriteFile(filepath.Join(p.dir, "args.json"), []byte(`{"q":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// Each process is a shell issuing its receipts one after another; the
	// eight shells run at once, and each writes the ids it was given.
	loop := `i=0; while [ $i -lt ` + strconv.Itoa(each) + ` ]; do
  printf 'proc %s call %s' "$1" $i > "$2/res.$1"
  readproof receipts issue --session shared --tool search --args-json "$2/args.json" --result "$2/res.$1" >> "$2/ids.$1" || exit 1
  i=$((i+1))
done`
	start := time.Now()
	cmds := make([]*exec.Cmd, procs)
	for i := range cmds {
		cmds[i] = exec.Command("sh", "-c", loop, "sh", strconv.Itoa(i), p.dir)
		cmds[i].Dir, cmds[i].Env = p.proj, p.env
		var errb bytes.Buffer
		cmds[i].Stderr = &errb
		if err := cmds[i].Start(); err != nil {
			t.Fatal(err)
		}
		defer func(i int) {
			if errb.Len() > 0 {
				t.Logf("process %d stderr:\n%s", i, errb.String())
			}
		}(i)
	}
	for i, c := range cmds {
		if err := c.Wait(); err != nil {
			t.Fatalf("process %d: %v", i, err)
		}
	}
	elapsed := time.Since(start)
	t.Logf("%d receipts from %d concurrent processes in %v: %.0f receipts/s through the CLI", procs*each, procs, elapsed.Round(time.Millisecond), float64(procs*each)/elapsed.Seconds())

	var issued []string
	for i := 0; i < procs; i++ {
		data, err := os.ReadFile(filepath.Join(p.dir, "ids."+strconv.Itoa(i)))
		if err != nil {
			t.Fatal(err)
		}
		ids := strings.Fields(string(data))
		if len(ids) != each {
			t.Fatalf("process %d printed %d ids, want %d", i, len(ids), each)
		}
		issued = append(issued, ids...)
	}
	listed := p.list(t, "shared")
	if len(listed) != procs*each {
		t.Fatalf("session lists %d receipts, want %d", len(listed), procs*each)
	}
	seen := map[string]bool{}
	for _, r := range listed {
		if r.Check != "valid" || r.Session != "shared" || seen[r.ID] {
			t.Fatalf("listed receipt %+v: want a distinct valid receipt of session shared", r)
		}
		seen[r.ID] = true
	}
	for _, id := range issued {
		if !seen[id] {
			t.Fatalf("issued receipt %s is not listed", id)
		}
	}
	// The same ids, cited in the session and in another one: the second
	// finds every receipt through the id index alone.
	rep := p.verify(t, "shared", issued)
	if rep.Counts.Valid != procs*each || rep.Counts.Omitted != 0 || rep.StrictFail {
		t.Fatalf("claims in session shared: %+v", rep.Counts)
	}
	// cited in another session they are other_session, which fails
	// --strict (since session 30)
	rep = p.verify(t, "elsewhere", issued)
	if rep.Counts.OtherSession != procs*each || !rep.StrictFail {
		t.Fatalf("claims in session elsewhere: %+v", rep.Counts)
	}
	fsck(t, p.store)
}

// Acceptance 4: exec passes stdout and stderr through byte for byte, exits
// with the command's status and records exactly the bytes it passed.
func TestExecPreservesOutput(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	p := newReceiptsProject(t)
	rng := rand.New(rand.NewPCG(7, 7))
	outBytes := make([]byte, 1<<20+4097) // several pipe buffers, NULs and invalid UTF-8 included
	errBytes := make([]byte, 70001)
	for i := range outBytes {
		outBytes[i] = byte(rng.UintN(256))
	}
	for i := range errBytes {
		errBytes[i] = byte(rng.UintN(256))
	}
	outFile, errFile := filepath.Join(p.dir, "out.bin"), filepath.Join(p.dir, "err.bin")
	if err := os.WriteFile(outFile, outBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(errFile, errBytes, 0o644); err != nil {
		t.Fatal(err)
	}
	argv := []string{"sh", "-c", `cat "$1"; cat "$2" >&2; exit 7`, "sh", outFile, errFile}
	jsonFile := filepath.Join(p.dir, "receipt.json")
	stdout, stderr, code := p.run(t, nil, append([]string{"exec", "--session", "bytes", "--json-receipt", jsonFile, "--"}, argv...)...)
	if code != 7 {
		t.Fatalf("exit %d, want 7\n%s", code, stderr[max(0, len(stderr)-300):])
	}
	if !bytes.Equal(stdout, outBytes) {
		t.Fatalf("stdout differs: %d bytes, want %d", len(stdout), len(outBytes))
	}
	if !bytes.HasPrefix(stderr, errBytes) {
		t.Fatalf("stderr does not start with the command's %d bytes", len(errBytes))
	}
	line := string(stderr[len(errBytes):])
	if errBytes[len(errBytes)-1] != '\n' {
		// readproof starts its own line after the command's last byte
		line = strings.TrimPrefix(line, "\n")
	}
	data, err := os.ReadFile(jsonFile)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipts.DecodeReceipt(data)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("readproof: receipt %s (exit 7)\n", r.ID); line != want {
		t.Fatalf("stderr after the command's bytes: %q, want %q", line, want)
	}
	// The receipt hashes exactly what was streamed, and the argv as given.
	if got, want := r.ResultSHA256, receipts.CommandResult(outBytes, errBytes, 7, "").SHA256(); got != want {
		t.Errorf("result_sha256 %s, want %s", got, want)
	}
	if got, want := r.ArgsSHA256, receipts.ArgvArgs(argv).SHA256(); got != want {
		t.Errorf("args_sha256 %s, want %s", got, want)
	}
	if r.ExitCode == nil || *r.ExitCode != 7 || r.Tool != "exec" || r.Session != "bytes" {
		t.Errorf("receipt %+v", r)
	}
	// The stored receipt is the one written to --json-receipt.
	shown := p.must(t, "receipts", "show", "--json", r.ID)
	var s listedReceipt
	if err := json.Unmarshal(shown, &s); err != nil {
		t.Fatal(err)
	}
	if s.Result != r.ResultSHA256.String() || s.Check != "valid" {
		t.Errorf("show: %+v", s)
	}
	// `receipts issue` with the captured streams records the same result
	// hash: both paths hash alike.
	argsFile := filepath.Join(p.dir, "argv")
	if err := os.WriteFile(argsFile, []byte(strings.Join(argv, "\x00")+"\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	var issued listedReceipt
	if err := json.Unmarshal(p.must(t, "receipts", "issue", "--json", "--session", "bytes", "--tool", "exec",
		"--args", argsFile, "--stdout", outFile, "--stderr", errFile, "--exit-code", "7"), &issued); err != nil {
		t.Fatal(err)
	}
	if issued.Result != r.ResultSHA256.String() || issued.Args != r.ArgsSHA256.String() {
		t.Errorf("receipts issue hashed %s/%s, exec %s/%s", issued.Args, issued.Result, r.ArgsSHA256, r.ResultSHA256)
	}
}

// readproof exec itself receives a signal: it passes it on, waits for the
// command, records the receipt, then exits with the command's status.
func TestExecForwardsSignalsAndRecords(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	p := newReceiptsProject(t)
	cases := []struct {
		name   string
		sig    syscall.Signal
		script string
		code   int
		signal string
		out    string
	}{
		{"sigterm", syscall.SIGTERM, `echo started; exec sleep 30`, 143, "SIGTERM", "started\n"},
		{"sigint", syscall.SIGINT, `echo started; exec sleep 30`, 130, "SIGINT", "started\n"},
		// The command handles the signal itself and exits on its own terms.
		{"trapped", syscall.SIGTERM, `trap 'echo cleanup; exit 9' TERM; echo started; while :; do sleep 0.02; done`, 9, "", "started\ncleanup\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			session := "sig-" + c.name
			cmd := exec.Command("readproof", "exec", "--session", session, "--", "sh", "-c", c.script)
			cmd.Dir, cmd.Env = p.proj, p.env
			stdout, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			var errb bytes.Buffer
			cmd.Stderr = &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			timer := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
			defer timer.Stop()
			var got bytes.Buffer
			buf := make([]byte, 64)
			for !strings.Contains(got.String(), "started\n") {
				n, err := stdout.Read(buf)
				got.Write(buf[:n])
				if err != nil {
					t.Fatalf("command never started: %v\n%s", err, errb.String())
				}
			}
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			rest, _ := readAllPipe(stdout)
			got.Write(rest)
			err = cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			}
			if code != c.code || got.String() != c.out {
				t.Fatalf("exit %d stdout %q, want %d %q\n%s", code, got.String(), c.code, c.out, errb.String())
			}
			if !strings.Contains(errb.String(), "readproof: receipt rcpt_") {
				t.Fatalf("no receipt line on stderr:\n%s", errb.String())
			}
			listed := p.list(t, session)
			if len(listed) != 1 || listed[0].ExitCode == nil || *listed[0].ExitCode != c.code || listed[0].Signal != c.signal || listed[0].Check != "valid" {
				t.Fatalf("receipts of %s: %+v", session, listed)
			}
		})
	}
}

func readAllPipe(r interface{ Read([]byte) (int, error) }) ([]byte, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	return b.Bytes(), err
}

// BenchmarkCLIReceiptsIssue measures one `readproof receipts issue` process:
// start, key load, store open and a durable append.
func BenchmarkCLIReceiptsIssue(b *testing.B) {
	p := newReceiptsProject(b)
	args := filepath.Join(p.dir, "args.json")
	if err := os.WriteFile(args, []byte(`{}`), 0o644); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p.must(b, "receipts", "issue", "--session", "bench", "--tool", "t", "--args-json", args, "--result", args)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "receipts/s")
}
