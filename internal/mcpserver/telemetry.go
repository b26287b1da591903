package mcpserver

// Spans of MCP tool calls and resource reads (docs/observability.md).

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/telemetry"
)

// addTelemetry wraps tools/call and resources/read in a span each, when
// the context carries a tracer provider (telemetry configured).
func (s *Server) addTelemetry() {
	s.mcp.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if (method != "tools/call" && method != "resources/read") || !telemetry.Enabled(ctx) {
				return next(ctx, method, req)
			}
			call := telemetry.ToolCall{Method: method}
			switch p := req.GetParams().(type) {
			case *mcp.CallToolParamsRaw:
				// A name this server has no tool of is the client's free
				// text, of any length and any bytes: not recorded.
				if _, known := s.args[p.Name]; known {
					call.Tool = p.Name
				}
				var args struct {
					URI string `json:"uri"`
				}
				if json.Unmarshal(p.Arguments, &args) == nil {
					call.DataSources = dataSource(args.URI)
				}
			case *mcp.ReadResourceParams:
				call.DataSources = dataSource(p.URI)
			}
			if extra := req.GetExtra(); extra != nil {
				call.Header = extra.Header
			}
			ctx, span := telemetry.StartMCP(ctx, call)
			res, err := next(ctx, method, req)
			failed := false
			if r, ok := res.(*mcp.CallToolResult); ok && r != nil {
				failed = r.IsError
			}
			telemetry.EndMCP(span, failed, err)
			return res, err
		}
	})
}

// dataSource is the readproof URI a call names, when it is one (an agent's
// free text is not recorded).
func dataSource(uri string) []string {
	u, err := identity.ParseURI(uri)
	if err != nil {
		return nil
	}
	return []string{u.String()}
}
