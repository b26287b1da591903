package mcpserver_test

import (
	"os/exec"
	"strings"
	"testing"
)

// gitOut runs stock git on the store of p and returns its trimmed stdout.
func gitOut(t *testing.T, p *project, stdin string, args ...string) string {
	t.Helper()
	cmd := exec.Command("git", append([]string{"--git-dir", p.store}, args...)...)
	cmd.Env = append(p.env(), "GIT_AUTHOR_NAME=x", "GIT_AUTHOR_EMAIL=x@x", "GIT_COMMITTER_NAME=x", "GIT_COMMITTER_EMAIL=x@x")
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}

// TestEvidenceExportForged: the readproof_evidence_export tool makes the
// store checks `readproof evidence export` makes (session 24): a manifest
// commit whose tree holds a file no entry records is refused, naming the
// run, the commit and the check; a replace ref over the manifest commit
// is said beside the bundle, which is still written.
func TestEvidenceExportForged(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	p.cli(t, "run", "--id", "run-b", refundsURI)
	s := p.serve(t)
	if out := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); out.IsError || strings.Contains(text(out), "Warning") {
		t.Fatalf("clean export: %s", text(out))
	}

	// a replace ref over run-a's manifest commit: written, with a warning
	m := gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-a")
	gitOut(t, p, "", "replace", m, gitOut(t, p, "", "rev-parse", "refs/tags/readproof/runs/run-b"))
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export with a replace ref: %s", text(res))
	}
	mustContain(t, "replace warning", text(res), "Warning: run run-a: store check store_replace failed: refs/replace/"+m, "Hint: the bundle records the objects as stored")
	gitOut(t, p, "", "replace", "-d", m)

	// NOTES.md beside the run's files, run-a's ref moved to that commit
	blob := gitOut(t, p, "Approved by legal: 90 days.\n", "hash-object", "-w", "--stdin")
	tree := gitOut(t, p, gitOut(t, p, "", "ls-tree", m+"^{tree}")+"\n100644 blob "+blob+"\tNOTES.md\n", "mktree")
	forged := gitOut(t, p, "readproof run run-a: 1 entry\n", "commit-tree", tree)
	gitOut(t, p, "", "update-ref", "refs/tags/readproof/runs/run-a", forged, m)
	mustContain(t, "refusal", s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"}),
		"evidence export run-a: refused: run run-a, manifest "+forged+", fails the store check store_manifest: manifest commit "+forged+" holds NOTES.md",
		"readproof verify")
}
