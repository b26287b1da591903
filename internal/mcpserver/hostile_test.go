package mcpserver_test

import (
	"bufio"
	"encoding/json"
	"github.com/readproof/readproof/internal/testproc"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// wire is a `readproof mcp` subprocess driven line by line over its stdin
// and stdout, with no client library in between.
type wire struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	out    *bufio.Scanner
	stderr *testproc.SyncBuffer
}

// patience is how long the wire waits for the server to answer or to
// exit: until shortly before the test binary's deadline (go test
// -timeout), not a fixed time that a loaded machine may exceed. A server
// that stops answering still fails the test: at once when its stdout
// ends, at that deadline when it hangs.
func patience(t *testing.T) time.Duration {
	if d, ok := t.Deadline(); ok {
		return max(time.Until(d)-15*time.Second, time.Second)
	}
	return 10 * time.Minute
}

func (p *project) wire(t *testing.T) *wire {
	t.Helper()
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
	w := &wire{t: t, cmd: cmd, in: in, out: bufio.NewScanner(out), stderr: stderr}
	w.out.Buffer(make([]byte, 0, 1<<20), 64<<20)
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("readproof mcp exited with %v\nstderr: %s", err, stderr.Bytes())
			}
		case <-time.After(patience(t)):
			_ = cmd.Process.Kill()
			t.Errorf("readproof mcp did not exit at stdin EOF\nstderr: %s", stderr.Bytes())
		}
	})
	return w
}

// send writes one line (a newline is added).
func (w *wire) send(line string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, line+"\n"); err != nil {
		w.t.Fatalf("write %q: %v", line, err)
	}
}

// reply is one JSON-RPC response as it came over the wire.
type wireReply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int             `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// next reads the next line of stdout, which must be one JSON-RPC message.
func (w *wire) next() wireReply {
	w.t.Helper()
	lines := make(chan bool, 1)
	go func() { lines <- w.out.Scan() }()
	select {
	case ok := <-lines:
		if !ok {
			w.t.Fatalf("stdout ended (%v): the server stopped\nstderr: %s", w.out.Err(), w.stderr.Bytes())
		}
	case <-time.After(patience(w.t)):
		w.t.Fatalf("no answer before the test's deadline\nstderr: %s", w.stderr.Bytes())
	}
	var r wireReply
	if err := json.Unmarshal(w.out.Bytes(), &r); err != nil || r.JSONRPC != "2.0" {
		w.t.Fatalf("stdout line is not a JSON-RPC message: %q (%v)\nstderr: %s", w.out.Bytes(), err, w.stderr.Bytes())
	}
	return r
}

func (w *wire) initialize() {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wire","version":"1"}}}`)
	if r := w.next(); string(r.ID) != "1" || r.Error != nil {
		w.t.Fatalf("initialize: %+v", r)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// alive checks that the session still answers a request.
func (w *wire) alive(id int) {
	w.t.Helper()
	w.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"tools/list"}`)
	r := w.next()
	if string(r.ID) != itoa(id) || r.Error != nil || !strings.Contains(string(r.Result), "readproof_resolve") {
		w.t.Fatalf("tools/list after hostile input: %s %+v", r.ID, r.Error)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// TestHostileInput is issue 13.4: one request used to end `readproof mcp`.
// A resources/read whose URI holds a control character made the SDK build
// error data that is not JSON, and any line that was not JSON closed the
// session. Each now gets a JSON-RPC error and the server keeps serving.
func TestHostileInput(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	w := p.wire(t)
	w.initialize()

	// a URI with \u0001, inside and outside the readproof:// template
	for i, uri := range []string{`readproof://demo/policies/re\u0001funds`, `x\u0001y`, `readproof://demo/\udfff`} {
		id := 10 + i
		w.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"resources/read","params":{"uri":"` + uri + `"}}`)
		r := w.next()
		if string(r.ID) != itoa(id) || r.Error == nil || !strings.HasPrefix(r.Error.Message, "Resource not found: ") {
			t.Fatalf("resources/read %s: %s %+v", uri, r.Result, r.Error)
		}
		if !json.Valid(r.Error.Data) {
			t.Errorf("resources/read %s: error data is not JSON: %q", uri, r.Error.Data)
		}
		w.alive(100 + i)
	}

	// lines that are not JSON: a parse error with id null
	for i, line := range []string{"not json", "{", `{"jsonrpc":"2.0","id":5,"method":"tools/list"`, "\x00\xff", strings.Repeat("[", 10000)} {
		w.send(line)
		r := w.next()
		if string(r.ID) != "null" || r.Error == nil || r.Error.Code != -32700 {
			t.Fatalf("line %q: want a parse error (-32700, id null), got id %s %+v", line, r.ID, r.Error)
		}
		w.alive(200 + i)
	}

	// JSON that is not a message: an invalid request, with the id if it has one
	for i, c := range []struct{ line, id string }{
		{`{"id":7}`, "7"},
		{`{"jsonrpc":"1.0","id":"a","method":"tools/list"}`, `"a"`},
		{`[{"jsonrpc":"2.0","id":8,"method":"tools/list"}]`, "null"},
		{`42`, "null"},
		{`{"jsonrpc":"2.0","id":{},"method":"tools/list"}`, "null"},
	} {
		w.send(c.line)
		r := w.next()
		if string(r.ID) != c.id || r.Error == nil || r.Error.Code != -32600 {
			t.Fatalf("line %q: want an invalid request (-32600, id %s), got id %s %+v", c.line, c.id, r.ID, r.Error)
		}
		w.alive(300 + i)
	}

	// blank lines are skipped without an answer
	w.send("")
	w.send("   ")
	w.alive(400)
}

// TestAnswersBeforeEOF: requests written before stdin closes are answered
// (a one-shot pipe, `printf ... | readproof mcp`), which the SDK's own
// transport does not do (go-sdk #1061).
func TestAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	cmd := exec.Command(os.Args[0], "--store", p.store, "--config", p.config, "mcp")
	cmd.Dir = p.dir
	cmd.Env = p.env()
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
not json
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
`)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("readproof mcp: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	ids := map[string]bool{}
	for _, l := range lines {
		var r wireReply
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("not JSON: %q", l)
		}
		ids[string(r.ID)] = true
	}
	for _, id := range []string{"1", "null", "2"} {
		if !ids[id] {
			t.Errorf("no answer with id %s in %q", id, out)
		}
	}
}
