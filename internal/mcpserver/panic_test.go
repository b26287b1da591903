package mcpserver_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/mcpserver"
	"github.com/readproof/readproof/internal/testproc"
)

// TestToolPanicIsAToolError: a tool whose handler panics (a defect, as the
// replay window's overflow was) answers that call with a tool error, logs
// the panic with its stack, and the server goes on answering: over --http
// every client shares the process, and the SDK recovers nothing.
func TestToolPanicIsAToolError(t *testing.T) {
	p := demoProject(t)
	logs := &testproc.SyncBuffer{}
	srv, err := mcpserver.New(mcpserver.Options{Open: p.opener(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	mcpserver.AddPanicTool(srv)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := srv.Run(context.Background(), inR, outW)
		outW.Close()
		done <- err
	}()
	ctx := ctxT(t)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, nil)
	if err != nil {
		t.Fatal(err)
	}
	call := func(n int) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "readproof_test_panic", Arguments: map[string]any{"n": n}})
		if err != nil {
			t.Fatalf("readproof_test_panic n=%d: %v", n, err)
		}
		return res
	}
	res := call(1)
	if !res.IsError || !strings.Contains(text(res), "readproof_test_panic failed: an internal error in readproof") {
		t.Fatalf("the panicking call: want a tool error, got %s", text(res))
	}
	if strings.Contains(text(res), "index out of range") || strings.Contains(text(res), "goroutine") {
		t.Errorf("the client was shown Go's panic: %s", text(res))
	}
	if !bytes.Contains(logs.Bytes(), []byte("tool panicked")) || !bytes.Contains(logs.Bytes(), []byte("index out of range")) {
		t.Errorf("the panic was not logged: %s", logs.Bytes())
	}
	if res := call(0); res.IsError {
		t.Fatalf("the call after the panic: %s", text(res))
	}
	cs.Close()
	inW.Close()
	if err := <-done; err != nil {
		t.Errorf("Run: %v", err)
	}
}

// TestRequestPanicIsAnInternalError: outside the tools (a resource read, a
// list), a handler's panic is answered with a JSON-RPC internal error and
// logged, not left to end the process.
func TestRequestPanicIsAnInternalError(t *testing.T) {
	logs := &testproc.SyncBuffer{}
	srv, err := mcpserver.New(mcpserver.Options{Open: demoProject(t).opener(), Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	h := mcpserver.Recovered(srv)(func(context.Context, string, mcp.Request) (mcp.Result, error) {
		panic("a defect in a handler")
	})
	res, err := h(ctxT(t), "resources/read", nil)
	var we *jsonrpc.Error
	if res != nil || !errors.As(err, &we) || we.Code != jsonrpc.CodeInternalError ||
		we.Message != "resources/read failed: an internal error in readproof (the server logged it and keeps serving)" {
		t.Fatalf("a panicking resources/read answered %v, %#v", res, err)
	}
	if !bytes.Contains(logs.Bytes(), []byte("a defect in a handler")) {
		t.Errorf("the panic was not logged: %s", logs.Bytes())
	}
}
