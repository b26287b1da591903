package mcpserver_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/testproc"
)

// TestEvidenceExportReplayWarning (session 25): a run whose snapshot
// changed in the store after it was recorded exports with replay.all_match
// false; `readproof evidence export` warns of it beside the bundle ("1 of 1
// entries did not replay from this store ...") with a hint, but the
// readproof_evidence_export tool answered the bundle as if it were sound.
// Its answer now carries replay_all_match and the warning, in warnings and
// in the text, with the hint; a clean export carries neither.
func TestEvidenceExportReplayWarning(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	s := p.serve(t)
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	clean, _ := res.StructuredContent.(map[string]any)
	if res.IsError || clean["replay_all_match"] != true || clean["warnings"] != nil || strings.Contains(text(res), "Warning") {
		t.Fatalf("clean export: replay_all_match %v, warnings %v: %s", clean["replay_all_match"], clean["warnings"], text(res))
	}

	// the snapshot's bytes changed in place, as testscript's tamper does
	var blob string
	for _, line := range strings.Split(gitOut(t, p, "", "ls-tree", "-r", "refs/tags/readproof/runs/run-a^{tree}"), "\n") {
		if meta, path, ok := strings.Cut(line, "\t"); ok && strings.HasPrefix(path, "content/") {
			blob = meta[strings.LastIndexByte(meta, ' ')+1:]
		}
	}
	if blob == "" {
		t.Fatal("no snapshot in run-a's tree")
	}
	if err := gitstore.UnpackForTest(p.store); err != nil {
		t.Fatal(err)
	}
	if err := testproc.DamageLoose(p.store, blob); err != nil {
		t.Fatal(err)
	}

	res = s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export of a damaged run: %s", text(res))
	}
	checkShape(t, "readproof_evidence_export", res)
	out, _ := res.StructuredContent.(map[string]any)
	const want = "run run-a: 1 of 1 entries did not replay from this store (the bundle records it: replay.all_match false); `evidence verify` of it fails"
	if out["replay_all_match"] != false {
		t.Errorf("replay_all_match = %v, want false", out["replay_all_match"])
	}
	if ws, _ := out["warnings"].([]any); len(ws) != 1 || ws[0] != want {
		t.Errorf("warnings = %v, want [%q]", out["warnings"], want)
	}
	mustContain(t, "text", text(res), "Warning: "+want+".", "Hint: `readproof verify --read-data` ", "names what is damaged; restore it from a clone")
	if !strings.Contains(str(t, out, "bundle"), `"all_match": false`) {
		t.Errorf("the bundle does not record all_match false")
	}
}
