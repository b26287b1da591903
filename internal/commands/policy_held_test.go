package commands

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyHeldReplaced (session 31, revops): the policy file --config
// names is opened when the command starts (envFor) and read by its first
// loadPolicy, which a command that reads the policy only when it needs it
// (openRead's lazy policy: a commit's signing after a long replay) makes
// late. A file replaced by a rename in between (an editor's save,
// `resource add` from another shell) was read as it was when the command
// started; the file the path names now is read, as before session 31.
func TestPolicyHeldReplaced(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, PolicyName)
	if err := os.WriteFile(cfg, []byte("# no resources yet\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := envFor(strings.NewReader(""), io.Discard, io.Discard, cfg, filepath.Join(dir, ".readproof"), false)
	if err != nil {
		t.Fatal(err)
	}
	next := filepath.Join(dir, "next.toml")
	if err := os.WriteFile(next, []byte("[[resource]]\nuri = \"readproof://demo/doc\"\nsource = { type = \"filesystem\", path = \"doc.md\" }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(next, cfg); err != nil {
		t.Fatal(err)
	}
	pol, err := e.loadPolicy()
	if err != nil {
		t.Fatal(err)
	}
	if n := len(pol.Resources()); n != 1 {
		t.Errorf("policy file replaced before it was read: %d resources read, want the new file's 1", n)
	}
}
