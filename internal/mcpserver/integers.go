package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/identity"
)

// exactIntegers refuses a tool call whose integer argument (a position, an
// offset, a page bound) the SDK could not read (readsAsInteger), as the
// input schema refuses a wrong type: a tool error starting `validating
// "arguments"`, which argumentHints ends with the tool's arguments. The
// SDK reads arguments through a float64 and its shortest decimal form, so
// an integer near 2^63 or beyond (9223372036854775807, -2^63, 1e300)
// failed in Go's words, quoting the server's type names and a slice of the
// request ("json: cannot unmarshal number 9223372036854776000,"run_id":"r...
// overflows into Go struct field mcpserver.MountInput.position of type
// int"), with no hint.
func (s *Server) exactIntegers(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		creq, isCall := req.(*mcp.CallToolRequest)
		if !isCall || creq.Params == nil || len(s.ints[creq.Params.Name]) == 0 || len(creq.Params.Arguments) == 0 {
			return next(ctx, method, req)
		}
		var args map[string]json.RawMessage
		if json.Unmarshal(creq.Params.Arguments, &args) != nil {
			return next(ctx, method, req) // the schema says what is wrong
		}
		for _, name := range s.ints[creq.Params.Name] {
			raw := bytes.TrimSpace(args[name])
			if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
				continue // absent, or not a number: the schema's to refuse
			}
			if readsAsInteger(string(raw)) {
				continue
			}
			var res mcp.CallToolResult
			res.SetError(fmt.Errorf(`validating "arguments": %s: %s is out of range: integers are read through a float64 and must stay within ±2^63 (exact up to 2^53)`,
				name, identity.Shorten(string(raw), 40)))
			return &res, nil
		}
		return next(ctx, method, req)
	}
}

// readsAsInteger reports whether the SDK reads the JSON number n into an
// int64, as it does: parsed as a float64, written in its shortest decimal
// form and that parsed as an int64; or whether n is no integer at all (a
// fraction, which the schema refuses).
func readsAsInteger(n string) bool {
	f, err := strconv.ParseFloat(n, 64)
	if err != nil {
		return false // beyond float64
	}
	if f != math.Trunc(f) {
		return true
	}
	_, err = strconv.ParseInt(strconv.FormatFloat(f, 'f', -1, 64), 10, 64)
	return err == nil
}
