package mcpserver_test

import (
	"bufio"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testproc"
)

// TestStdioClientGoneMidCall: a host that goes away while a call runs (it
// closes the server's stdout and stdin: it crashed, or was closed) does not
// kill `readproof mcp` with the first answer written after it. The server
// used to die of SIGPIPE there, in the middle of whatever the other calls
// in flight were doing (a fetch, a write to the store, the receipt of a
// write already made); now the write fails, the calls in flight end as
// cancelled calls do (nothing half-written), and the server exits 0.
func TestStdioClientGoneMidCall(t *testing.T) {
	t.Parallel()
	p, arrived, _ := slowSource(t)
	p.cli(t, "run", "start", "gone")
	cmd := exec.Command(os.Args[0], "--store", p.store, "--config", p.config, "mcp")
	cmd.Dir = p.dir
	cmd.Env = p.env()
	stderr := &testproc.SyncBuffer{}
	cmd.Stderr = stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatalf("write %q: %v", line, err)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gone","version":"1"}}}`)
	if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || !strings.Contains(line, `"id":1`) {
		t.Fatalf("initialize: %q %v", line, err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"readproof_run_mount","arguments":{"run_id":"gone","uri":"readproof://web/slow"}}}`)
	<-arrived
	// The host goes away: nobody reads stdout any more, and the answer to
	// the ping is written into a broken pipe while the mount is in flight.
	out.Close()
	send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`)
	in.Close()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("readproof mcp did not exit after its host went away\nstderr: %s", stderr.Bytes())
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) && !ee.Exited() {
		t.Fatalf("readproof mcp was killed (%v) when its host went away, with a call in flight\nstderr: %s", err, stderr.Bytes())
	}
	if err != nil {
		t.Errorf("readproof mcp exited with %v after its host went away; want 0\nstderr: %s", err, stderr.Bytes())
	}
	// The mount was cancelled where it stood: the run is as it was, and
	// nothing is left half-written.
	if show := p.cli(t, "run", "show", "gone"); !strings.Contains(show, "entries  0") {
		t.Errorf("run gone after its cancelled mount:\n%s", show)
	}
	p.cli(t, "verify")
}
