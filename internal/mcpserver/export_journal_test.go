package mcpserver_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestEvidenceExportJournalUnchecked (session 25, verifyedges): the journal
// check of an export reads at most 4,096 journal commits; when they do not
// reach the manifest it checks nothing. `evidence verify` warned of it, but
// the readproof_evidence_export tool (and the command) answered without a
// word. Its answer now carries the warning, in warnings and in the text,
// with its hint, as evidence_verify_journal_bound.txtar holds for the
// command. The journal is lengthened with stock git (fast-import).
func TestEvidenceExportJournalUnchecked(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	tip := gitOut(t, p, "", "rev-parse", "refs/heads/main")
	var in strings.Builder
	for i := range 4100 {
		in.WriteString("commit refs/heads/main\ncommitter x <x@x> 0 +0000\ndata 2\nx\n")
		if i == 0 {
			fmt.Fprintf(&in, "from %s\n", tip)
		}
		in.WriteString("\n")
	}
	gitOut(t, p, in.String(), "fast-import", "--quiet")

	s := p.serve(t)
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export past the journal bound: %s", text(res))
	}
	checkShape(t, "readproof_evidence_export", res)
	out, _ := res.StructuredContent.(map[string]any)
	const want = "run run-a: store check journal: not checked: the newest 4096 commits of the journal (refs/heads/main) do not reach manifest "
	ws, _ := out["warnings"].([]any)
	if len(ws) != 1 || !strings.HasPrefix(fmt.Sprint(ws[0]), want) {
		t.Errorf("warnings = %v, want one starting %q", out["warnings"], want)
	}
	mustContain(t, "text", text(res), "Warning: "+want, "Hint: the bundle is written and does not record it; `readproof verify` walks the whole journal")
}
