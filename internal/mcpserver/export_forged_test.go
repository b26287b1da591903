package mcpserver_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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

// forgeNotes writes a commit of run-a's manifest commit m's tree with
// NOTES.md beside the run's files (a file no entry records) and returns
// its id; no ref names it.
func forgeNotes(t *testing.T, p *project, m string) string {
	t.Helper()
	blob := gitOut(t, p, "Approved by legal: 90 days.\n", "hash-object", "-w", "--stdin")
	tree := gitOut(t, p, gitOut(t, p, "", "ls-tree", m+"^{tree}")+"\n100644 blob "+blob+"\tNOTES.md\n", "mktree")
	return gitOut(t, p, "readproof run run-a: 1 entry\n", "commit-tree", tree)
}

// trustSignersFile makes p's readproof.toml name the file allowed_signers
// of the project as [signing] allowed_signers.
func trustSignersFile(t *testing.T, p *project) {
	t.Helper()
	conf, err := os.ReadFile(p.config)
	if err != nil {
		t.Fatal(err)
	}
	conf = bytes.Replace(conf, []byte("\n[[resource]]"), []byte("\n[signing]\nallowed_signers = \"allowed_signers\"\n\n[[resource]]"), 1)
	if err := os.WriteFile(p.config, conf, 0o644); err != nil {
		t.Fatal(err)
	}
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
	forged := forgeNotes(t, p, m)
	gitOut(t, p, "", "update-ref", "refs/tags/readproof/runs/run-a", forged, m)
	mustContain(t, "refusal", s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"}),
		"evidence export run-a: refused: run run-a, manifest "+forged+", fails the store check store_manifest: manifest commit "+forged+" holds NOTES.md",
		"readproof verify")
}

// TestEvidenceExportSignersUnreadable: with [signing] allowed_signers naming
// a file the server cannot read, readproof_evidence_export of a signed run
// still answers the bundle (the signature is checked for validity) and
// warns that the signer was not checked against the file, without naming
// the server's path; with the file in place it warns of nothing.
func TestEvidenceExportSignersUnreadable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	key := filepath.Join(p.home, "signing")
	p.cli(t, "key", "init", "--principal", "signer@example.com", "--key", key)
	p.extra = append(p.extra, "READPROOF_SIGNING_KEY="+key)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	signers := p.cli(t, "key", "show", "--format", "allowed-signers", "--key", key)
	trustSignersFile(t, p)
	s := p.serve(t)
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export with allowed_signers missing: %s", text(res))
	}
	mustContain(t, "signers warning", text(res), "Warning: the [signing] allowed_signers file of the server's readproof.toml cannot be read, so the manifest commit's signer was not checked against it")
	if strings.Contains(text(res), p.dir) {
		t.Errorf("the warning names the server's path %s: %s", p.dir, text(res))
	}
	p.write(t, "allowed_signers", signers)
	if res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); res.IsError || strings.Contains(text(res), "Warning") {
		t.Fatalf("export with allowed_signers in place: %s", text(res))
	}
}

// TestEvidenceExportSignersAuthorizedKeys: an allowed_signers file given in
// authorized_keys form is read as the command reads it: a run signed by a
// key it does not hold is refused, as `evidence export` refuses it, not
// answered with a warning that the file cannot be read.
func TestEvidenceExportSignersAuthorizedKeys(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	key, other := filepath.Join(p.home, "signing"), filepath.Join(p.home, "other")
	p.cli(t, "key", "init", "--principal", "signer@example.com", "--key", key)
	p.cli(t, "key", "init", "--principal", "other@example.com", "--key", other)
	p.extra = append(p.extra, "READPROOF_SIGNING_KEY="+key)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	p.write(t, "allowed_signers", p.cli(t, "key", "show", "--format", "authorized-key", "--key", other))
	trustSignersFile(t, p)
	s := p.serve(t)
	mustContain(t, "refusal", s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"}), "fails the store check git_commit_signature")
	// the signer's own key in the same form: exported, no warning
	p.write(t, "allowed_signers", p.cli(t, "key", "show", "--format", "authorized-key", "--key", key))
	if res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); res.IsError || strings.Contains(text(res), "Warning") {
		t.Fatalf("export with the signer's key as authorized_keys: %s", text(res))
	}
}
