package mcpserver

import (
	"context"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Prepare exposes prepare to the external tests.
var Prepare = prepare

// LimitConcurrency exposes the concurrency limit of the HTTP front end.
func LimitConcurrency(next http.Handler, n int, wait time.Duration) http.Handler {
	return limitConcurrency(next, n, wait)
}

// PanicIn and PanicOut are the arguments and result of AddPanicTool's tool.
type PanicIn struct {
	N int `json:"n" jsonschema:"any number; 1 panics"`
}

type PanicOut struct {
	Receipt
	N int `json:"n"`
}

// AddPanicTool adds readproof_test_panic to s, whose handler indexes out of
// range when n is 1 (a defect, as a replay window's overflow was).
func AddPanicTool(s *Server) {
	addTool(s, &mcp.Tool{Name: "readproof_test_panic", Description: "panics when n is 1"},
		func(_ context.Context, _ *call, in PanicIn) (*PanicOut, reply, error) {
			b := make([]byte, 1)
			_ = b[in.N]
			return &PanicOut{N: in.N}, reply{text: "ok"}, nil
		})
}

// Recovered exposes the middleware that turns a request's panic into a
// JSON-RPC error.
func Recovered(s *Server) func(mcp.MethodHandler) mcp.MethodHandler { return s.recovered }

// WithReplayChunk is o replaying at most n recorded bytes at once.
func WithReplayChunk(o Options, n int64) Options {
	o.replayChunk = n
	return o
}

// WithPageEntries is o listing at most n entries per answer.
func WithPageEntries(o Options, n int) Options {
	o.pageEntries = n
	return o
}
