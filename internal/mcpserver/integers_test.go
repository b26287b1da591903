package mcpserver_test

import (
	"strings"
	"testing"
)

// TestIntegerArgumentsOutOfRange: an integer argument (a position, an
// offset, a page bound) that the server cannot read is refused like any
// argument its schema refuses: a tool error naming the argument and the
// range, with the hint listing what the tool takes. The SDK reads
// arguments through a float64 in its shortest decimal form, and an
// integer near 2^63 or beyond failed in Go's words ("json: cannot
// unmarshal number 9223372036854776000,\"run_id\":\"r... overflows into Go
// struct field mcpserver.MountInput.position of type int"): the value
// changed, the server's type names, a slice of the request, and no hint.
func TestIntegerArgumentsOutOfRange(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	s.ok(t, "readproof_run_start", map[string]any{"run_id": "big"})
	for _, c := range []struct {
		tool, arg string
		args      map[string]any
	}{
		{"readproof_run_mount", "position", map[string]any{"run_id": "big", "uri": refundsURI, "position": int64(9223372036854775807)}},
		{"readproof_run_mount", "position", map[string]any{"run_id": "big", "uri": refundsURI, "position": 1e300}},
		{"readproof_manifest", "entry_offset", map[string]any{"target": "big", "entry_offset": int64(-9223372036854775808)}},
		{"readproof_replay", "max_bytes", map[string]any{"target": "big", "include_content": true, "max_bytes": -1e19}},
	} {
		msg := s.fail(t, c.tool, c.args)
		mustContain(t, c.tool+" "+c.arg, msg, `validating "arguments"`, c.arg, "out of range", "2^63", "hint: "+c.tool+" takes")
		for _, bad := range []string{"Go struct", "mcpserver.", "unmarshal"} {
			if strings.Contains(msg, bad) {
				t.Errorf("%s with %s %v: the error says %q: %s", c.tool, c.arg, c.args[c.arg], bad, msg)
			}
		}
	}
	// an integer the SDK reads reaches the tool
	msg := s.fail(t, "readproof_run_mount", map[string]any{"run_id": "big", "uri": refundsURI, "position": int64(9007199254740992)})
	mustContain(t, "position 2^53", msg, "position 9007199254740992 is not the next one")
	msg = s.fail(t, "readproof_manifest", map[string]any{"target": "big", "entry_offset": int64(1 << 62)})
	mustContain(t, "entry_offset 2^62", msg, "run big is still open")
	s.ok(t, "readproof_run_mount", map[string]any{"run_id": "big", "uri": refundsURI, "position": 0})
}
