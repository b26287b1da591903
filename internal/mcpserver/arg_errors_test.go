package mcpserver_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestArgumentErrorsShortAndEscaped: the error of a call whose arguments
// the input schema refuses is readproof's tool error like any other: a
// value of the wrong type, or an unknown argument's name, is quoted in a
// short message with its control characters and bidirectional overrides
// escaped. The SDK's validator quoted a wrong-typed value raw (an escape
// sequence reached the host's terminal as is) and whole (a 1 MiB value
// made a 1 MiB tool result), which the URI fix did not reach.
func TestArgumentErrorsShortAndEscaped(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	huge := strings.Repeat("r", 1<<20)
	for name, c := range map[string]struct {
		tool string
		args map[string]any
	}{
		"huge value of the wrong type":    {"readproof_replay", map[string]any{"target": "x", "include_content": huge}},
		"huge unknown argument":           {"readproof_resolve", map[string]any{"uri": refundsURI, huge: 1}},
		"hostile value of the wrong type": {"readproof_replay", map[string]any{"target": "x", "include_content": "\x1b[2J\u202eevil"}},
	} {
		msg := s.fail(t, c.tool, c.args)
		if len(msg) > 2048 {
			t.Errorf("%s: the error is %d bytes: %.200q", name, len(msg), msg)
		}
		if strings.ContainsAny(msg, "\x1b\u202e") {
			t.Errorf("%s: the error carries a raw control character or override: %q", name, msg)
		}
		mustContain(t, name, msg, "validating", "hint: "+c.tool+" takes")
	}
}

// TestUnknownHugeToolName: a call to a tool named with a megabyte gets the
// unknown-tool error in a few hundred bytes. The SDK's message quoted the
// name whole, and the did-you-mean compared all of it with every tool name
// (0.8 s of CPU for 1 MiB, 3.1 s for a 4 MiB body over HTTP, per request).
func TestUnknownHugeToolName(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	_, err := s.cs.CallTool(ctxT(t), &mcp.CallToolParams{Name: strings.Repeat("r", 1<<20) + "\u202e", Arguments: map[string]any{}})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != jsonrpc.CodeInvalidParams {
		t.Fatalf("%v, want a JSON-RPC invalid-params error", err)
	}
	if len(we.Message) > 2048 {
		t.Errorf("the error is %d bytes: %.200q", len(we.Message), we.Message)
	}
	mustContain(t, "unknown tool error", we.Message, `unknown tool "rrr`, "tools/list names the tools")
	// the did-you-mean skips names over 64 runes, which holds while no
	// tool's name is over 42 (a third further is never near)
	tools, err := s.cs.ListTools(ctxT(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if len(tool.Name) > 42 {
			t.Errorf("tool %s: a name over 42 bytes makes a typo of it longer than the did-you-mean looks at", tool.Name)
		}
	}
}
