package mcpserver_test

import (
	"strings"
	"testing"
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
