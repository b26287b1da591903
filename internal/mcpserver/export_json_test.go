package mcpserver_test

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// TestEvidenceExportJSONSameAsTool (session 26): `readproof evidence export
// --json --out FILE` and the readproof_evidence_export tool say the same
// facts under the same names, and the same warnings in the same words
// (one sequence decides both: store.ExportOutcomeOf). The store here holds
// a replace ref, which warns (store_replace) and writes the bundle.
func TestEvidenceExportJSONSameAsTool(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	p.write(t, "x.txt", "x\n")
	p.write(t, "y.txt", "y\n")
	x := gitOut(t, p, "", "hash-object", "-w", filepath.Join(p.dir, "x.txt"))
	y := gitOut(t, p, "", "hash-object", "-w", filepath.Join(p.dir, "y.txt"))
	gitOut(t, p, "", "replace", x, y)

	var cli map[string]any
	if err := json.Unmarshal([]byte(p.cli(t, "--json", "evidence", "export", "run-a", "--out", filepath.Join(p.dir, "a.json"))), &cli); err != nil {
		t.Fatal(err)
	}
	tool := p.serve(t).ok(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if ws, _ := tool["warnings"].([]any); len(ws) != 1 {
		t.Fatalf("the tool's warnings are %v, want the store_replace warning", tool["warnings"])
	}
	for _, k := range []string{"target", "run_id", "manifest_id", "merkle_root", "entries", "with_content", "replay_all_match", "warnings"} {
		if !reflect.DeepEqual(cli[k], tool[k]) {
			t.Errorf("%s: evidence export --json says %v, the tool %v", k, cli[k], tool[k])
		}
	}
}
