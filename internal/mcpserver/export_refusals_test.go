package mcpserver_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestEvidenceExportRefusesNamingEvery: run-b's ref moved by hand to a
// forged commit of run-a's manifest (NOTES.md beside its files) fails two
// refusing store checks. `readproof evidence export` says the first as its
// error and each further one on a line of its own; the tool's error said
// the first and "(and 1 more)" without naming it. It names each one now.
func TestEvidenceExportRefusesNamingEvery(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	p.cli(t, "run", "--id", "run-b", refundsURI)
	s := p.serve(t)

	m := gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-a")
	forged := forgeNotes(t, p, m)
	gitOut(t, p, "", "update-ref", "refs/tags/readproof/runs/run-b", forged)
	msg := s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-b"})
	mustContain(t, "refusal", msg,
		"evidence export run-b: refused: run run-b (recorded as run-a), manifest "+forged+", fails the store check store_manifest: ",
		"(and 1 more)",
		"run run-b (recorded as run-a): store check store_manifest failed: refs/tags/readproof/runs/run-b names manifest "+forged+", which records run run-a, and the journal records no rename of it to run-b")
	if n := strings.Count(msg, "hint:"); n != 1 {
		t.Errorf("the refusal gives %d hints, want 1: %s", n, msg)
	}
}
