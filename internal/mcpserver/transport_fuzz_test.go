package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/testproc"
)

// FuzzMCPInput feeds arbitrary input lines to a server through the stdio
// transport (issue 13.4): the session must survive them, every line written
// must be one JSON-RPC 2.0 message, and a request sent after them must
// still be answered. The server has no store (Open fails), so only the
// protocol layer is exercised.
func FuzzMCPInput(f *testing.F) {
	for _, seed := range []string{
		"not json",
		`{"jsonrpc":"2.0","id":2,"method":"resources/read","params":{"uri":"readproof://a/b\u0001c"}}`,
		`{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"x\u0001"}}`,
		`[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]`,
		`{"id":7}`,
		"{\n}",
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"readproof_resolve","arguments":{"uri":"\u0000"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"initialize","params":{}}`,
		"\xff\xfe\r\n\r\n",
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			return
		}
		s, err := New(Options{Open: func() (*store.Store, error) { return nil, errors.New("no store in this test") }})
		if err != nil {
			t.Fatal(err)
		}
		const end = `"fuzz-end-7c1e"`
		var in bytes.Buffer
		in.WriteString(`{"jsonrpc":"2.0","id":"fuzz-init-7c1e","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}` + "\n")
		in.WriteString(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
		in.Write(data)
		in.WriteString("\n" + `{"jsonrpc":"2.0","id":` + end + `,"method":"tools/list"}` + "\n")
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		var out testproc.SyncBuffer
		if err := s.Run(ctx, &in, &out); err != nil {
			t.Fatalf("session ended with %v", err)
		}
		answered := false
		sc := bufio.NewScanner(bytes.NewReader(out.Bytes()))
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			var msg struct {
				JSONRPC string          `json:"jsonrpc"`
				ID      json.RawMessage `json:"id"`
				Result  json.RawMessage `json:"result"`
			}
			if err := json.Unmarshal(sc.Bytes(), &msg); err != nil || msg.JSONRPC != "2.0" {
				t.Fatalf("output line is not a JSON-RPC message: %q", sc.Bytes())
			}
			if string(msg.ID) == end && strings.Contains(string(msg.Result), "readproof_resolve") {
				answered = true
			}
		}
		if !answered {
			t.Fatalf("the request after the input was not answered; output:\n%s", out.Bytes())
		}
	})
}

// TestLineTooLong: a line over the size limit is answered with a parse
// error and skipped up to its newline; the next line is read as usual.
func TestLineTooLong(t *testing.T) {
	t.Parallel()
	in := strings.NewReader(strings.Repeat("x", 200) + "\n" + `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n")
	var out testproc.SyncBuffer
	conn, err := (&lineTransport{in: in, out: &out, maxLine: 64}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	msg, err := conn.Read(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out.Bytes()), `"code":-32700`) {
		t.Errorf("no parse error for the long line: %s", out.Bytes())
	}
	if req, ok := msg.(*jsonrpc.Request); !ok || req.Method != "ping" {
		t.Errorf("next message %#v, want the ping request", msg)
	}
}
