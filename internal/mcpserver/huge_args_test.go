package mcpserver_test

import (
	"strings"
	"testing"
)

// TestHugeTargetArgument: the URI's fix, one argument over: a run or
// manifest id of a megabyte (readproof_manifest, _replay, _diff,
// _evidence_export, _probe_check) is refused in a short error, not quoted
// back whole into a tool result the host passes to the model.
func TestHugeTargetArgument(t *testing.T) {
	t.Parallel()
	p := demoProject(t)
	s := p.serve(t)
	huge := strings.Repeat("r", 1<<20)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"readproof_manifest", map[string]any{"target": huge}},
		{"readproof_replay", map[string]any{"target": huge}},
		{"readproof_diff", map[string]any{"a": huge, "b": huge}},
		{"readproof_evidence_export", map[string]any{"target": huge}},
		{"readproof_probe_check", map[string]any{"target": huge, "answer": "x"}},
		{"readproof_run_mount", map[string]any{"run_id": huge, "uri": "readproof://demo/policies/refunds"}},
		{"readproof_tag_set", map[string]any{"uri": "readproof://demo/policies/refunds", "tag": huge, "snapshot": huge}},
	} {
		msg := s.fail(t, c.tool, c.args)
		if len(msg) > 2048 {
			t.Errorf("%s with a 1 MiB argument: the error is %d bytes: %.200s", c.tool, len(msg), msg)
		}
	}
}
