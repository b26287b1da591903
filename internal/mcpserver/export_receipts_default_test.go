package mcpserver_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvidenceExportDefaultReceiptsKey: readproof_evidence_export checks
// receipt MACs with the key `evidence export` uses, the one at the default
// location when no setting names one (keyloc.ReceiptsForCheck), not only
// with a key the server issues under. Before session 29's re-read
// (revevaudit) a server started without a configured key exported a
// receipt edited in the store, which the command refuses.
func TestEvidenceExportDefaultReceiptsKey(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	p.cli(t, "receipts", "key", "init") // the default location, under p.home
	p.write(t, "args.json", `{"q": "refunds"}`)
	p.write(t, "result.txt", "30 days\n")
	receipt := strings.TrimSpace(p.cli(t, "receipts", "issue", "--session", "s1", "--run", "run-a", "--tool", "search",
		"--args-json", filepath.Join(p.dir, "args.json"), "--result", filepath.Join(p.dir, "result.txt")))
	s := p.start(t) // no key configured: the server issues no receipts
	if res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); res.IsError {
		t.Fatalf("export of the genuine receipt: %s", text(res))
	}

	// the receipt's tool edited with git plumbing, through an index of our own
	ref := "refs/heads/readproof/receipts/sessions/s1"
	tip := gitOut(t, p, "", "rev-parse", ref)
	var path string
	for _, line := range strings.Split(gitOut(t, p, "", "ls-tree", "-r", "--name-only", tip), "\n") {
		if strings.HasSuffix(line, receipt+".json") {
			path = line
		}
	}
	if path == "" {
		t.Fatalf("no file of receipt %q in session s1's tree", receipt)
	}
	body := gitOut(t, p, "", "cat-file", "blob", tip+":"+path)
	edited := strings.Replace(body, `"tool":"search"`, `"tool":"delete"`, 1)
	if edited == body {
		t.Fatalf("receipt %s names no tool search: %s", receipt, body)
	}
	blob := gitOut(t, p, edited, "hash-object", "-w", "--stdin")
	index := filepath.Join(t.TempDir(), "index")
	p.extra = append(p.extra, "GIT_INDEX_FILE="+index)
	gitOut(t, p, "", "read-tree", tip)
	gitOut(t, p, "", "update-index", "--cacheinfo", "100644,"+blob+","+path)
	tree := gitOut(t, p, "", "write-tree")
	p.extra = p.extra[:len(p.extra)-1]
	gitOut(t, p, "", "update-ref", ref, gitOut(t, p, "", "commit-tree", "-p", tip, "-m", "edited", tree), tip)

	out := filepath.Join(p.dir, "cli.json")
	_, cliErr, err := p.run("evidence", "export", "run-a", "--out", out)
	if err == nil {
		t.Fatalf("evidence export of the edited receipt succeeded")
	}
	msg := s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	for _, got := range []string{cliErr, msg} {
		mustContain(t, "refusal", got, "fails the store check receipts: verifying receipt summary: receipt "+receipt+": receipt MAC mismatch (tampered)")
	}
	if _, err := os.Stat(out); err == nil {
		t.Errorf("evidence export wrote %s", out)
	}

	// a default key that cannot be used: both write the bundle and say
	// that the MACs were not checked
	if err := os.Chmod(filepath.Join(p.home, ".config", "readproof", "receipts.key"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, cliErr, err = p.run("evidence", "export", "run-a", "--out", out); err != nil {
		t.Fatalf("evidence export with an unusable default key: %v\n%s", err, cliErr)
	}
	mustContain(t, "command's warning", cliErr, "the receipts key cannot be loaded, so the receipts' MACs were not checked")
	res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
	if res.IsError {
		t.Fatalf("export with an unusable default key: %s", text(res))
	}
	mustContain(t, "tool's warning", text(res), "the receipts key cannot be loaded, so the receipts' MACs were not checked; the operator fixes the key")
}

// TestEvidenceExportConfiguredReceiptsKeyUnloadable: a receipts key that
// [receipts] key names and that cannot be loaded refuses
// readproof_evidence_export, as it refuses `evidence export` (exit 4,
// since session 30), before a bundle is made; the tool's error names
// neither the key's file nor the loader's error (the server's files are
// the operator's). Before session 30's re-read (revevpull) the tool warned
// and answered a bundle whose receipts' MACs were never checked. The
// server starts without a key; the setting is added while it runs (the
// server reads readproof.toml again when it changes).
func TestEvidenceExportConfiguredReceiptsKeyUnloadable(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	p := demoProject(t)
	p.cli(t, "run", "--id", "run-a", refundsURI)
	s := p.start(t) // no key configured
	if res := s.call(t, "readproof_evidence_export", map[string]any{"target": "run-a"}); res.IsError {
		t.Fatalf("export without a key: %s", text(res))
	}
	keyFile := filepath.Join(p.home, "keys", "issuer.key")
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T)
	}{
		{"missing", func(*testing.T) {}},
		{"open to others", func(t *testing.T) {
			p.cli(t, "receipts", "key", "init", "--key", keyFile)
			if err := os.Chmod(keyFile, 0o644); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		tc.setup(t)
		if tc.name == "missing" {
			f, err := os.OpenFile(p.config, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := fmt.Fprintf(f, "\n[receipts]\nkey = %q\n", keyFile); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
		}
		out := filepath.Join(p.dir, "cli.json")
		_, cliErr, err := p.run("evidence", "export", "run-a", "--out", out)
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 4 {
			t.Fatalf("%s: evidence export: %v, want exit 4\n%s", tc.name, err, cliErr)
		}
		mustContain(t, tc.name+": command's refusal", cliErr, "the configured receipts key cannot be loaded, so the receipts' MACs cannot be checked")
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: evidence export wrote %s", tc.name, out)
		}
		msg := s.fail(t, "readproof_evidence_export", map[string]any{"target": "run-a"})
		mustContain(t, tc.name+": tool's refusal", msg, "evidence export run-a: the receipts key configured for this server (READPROOF_RECEIPTS_KEY or [receipts] key) cannot be loaded, so the receipts' MACs cannot be checked")
		mustContain(t, tc.name+": tool's hint", msg, "no bundle was made")
		if strings.Contains(msg, keyFile) || strings.Contains(msg, "issuer.key") {
			t.Errorf("%s: the tool's error names the operator's key file: %s", tc.name, msg)
		}
	}
}
