package main

import (
	"bytes"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEvidenceDocFailureListing makes the edit docs/evidence.md describes
// under "Verifying" (a bundle of the published example whose embedded bytes
// were changed to the 14-day text) and holds `evidence verify` against the
// store to the listing the page shows: the same checks in the same order, the
// same verdicts and details (ids and times aside), the same summary, each
// line on the stream the page's convention gives (lines that start with
// "readproof:" on stderr).
func TestEvidenceDocFailureListing(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	doc := string(readFile(t, "docs/evidence.md"))
	_, after, ok := strings.Cut(doc, "On failure it prints every check")
	if !ok {
		t.Fatal(`docs/evidence.md no longer has "On failure it prints every check"`)
	}
	blocks := readmeBlocks(after, "")
	if len(blocks) == 0 || !strings.HasPrefix(blocks[0], "ok   statement_type") {
		t.Fatal("docs/evidence.md: the failure listing is not the first block after its introduction")
	}
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	env := []string{"HOME=" + home, "XDG_CONFIG_HOME=" + filepath.Join(home, ".config"), "XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=" + filepath.Join(home, ".gitconfig-none"), "PATH=" + os.Getenv("PATH"), "LANG=C.UTF-8"}
	run := func(want int, args ...string) (string, string) {
		t.Helper()
		cmd := exec.Command("readproof", args...)
		cmd.Dir, cmd.Env = dir, env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != want {
			t.Fatalf("readproof %s: exit %d, want %d\n%s%s", strings.Join(args, " "), code, want, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	if err := os.MkdirAll(filepath.Join(dir, "policies"), 0o755); err != nil {
		t.Fatal(err)
	}
	v30, v14 := "Products can be refunded within 30 days.\n", "Products can be refunded within 14 days.\n"
	if err := os.WriteFile(filepath.Join(dir, "policies", "refunds.md"), []byte(v30), 0o644); err != nil {
		t.Fatal(err)
	}
	run(0, "resource", "add", "readproof://demo/policies/refunds", "--source-type", "filesystem", "--path", "policies/refunds.md")
	run(0, "run", "--id", "run-a", "readproof://demo/policies/refunds")
	run(0, "evidence", "export", "run-a", "--with-content", "--out", "bundle.json")
	bundle, err := os.ReadFile(filepath.Join(dir, "bundle.json"))
	if err != nil {
		t.Fatal(err)
	}
	from, to := base64.StdEncoding.EncodeToString([]byte(v30)), base64.StdEncoding.EncodeToString([]byte(v14))
	if !bytes.Contains(bundle, []byte(from)) {
		t.Fatal("the export does not embed the content as the page shows it")
	}
	if err := os.WriteFile(filepath.Join(dir, "edited.json"), bytes.ReplaceAll(bundle, []byte(from), []byte(to)), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr := run(3, "evidence", "verify", "edited.json")
	// ids and times are the run's own; the page shows illustrative ones
	id := regexp.MustCompile(`\b[0-9a-f]{40}\b`)
	when := regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	norm := func(l string) string { return when.ReplaceAllString(id.ReplaceAllString(l, "ID"), "TIME") }
	var wantOut, wantErr []string
	for _, l := range lines(blocks[0], dir) {
		if onStderr(l) {
			wantErr = append(wantErr, norm(l))
		} else {
			wantOut = append(wantOut, norm(l))
		}
	}
	for _, c := range []struct {
		stream    string
		got, want []string
	}{{"stdout", lines(stdout, dir), wantOut}, {"stderr", lines(stderr, dir), wantErr}} {
		var got []string
		for _, l := range c.got {
			got = append(got, norm(l))
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("evidence verify of the edited bundle printed on %s\n%s\ndocs/evidence.md shows\n%s", c.stream, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
	}
}
