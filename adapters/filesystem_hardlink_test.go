//go:build unix

package adapters_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// A hard link inside the roots to a file outside them is a second name of
// that file: nothing in its path shows where the file lives. A document
// with more than one name is refused, and its bytes are not returned; the
// same file with one name reads.
func TestFilesystemRefusesHardLink(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "docs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(base, "id_ed25519")
	if err := os.WriteFile(secret, []byte("PRIVATE KEY 7d1e"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(root, "notes.md")); err != nil {
		t.Skipf("link: %v", err)
	}
	env := adapters.Env{BaseDir: base, Roots: []string{root}}
	r, err := fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/notes.md"}, env)
	wantRefused(t, err, adapters.RuleRoots)
	if len(r.Content) != 0 || strings.Contains(err.Error(), "PRIVATE") || !strings.Contains(err.Error(), "2 names") {
		t.Errorf("content %q, error %v", r.Content, err)
	}
	// With its other name gone, the file has one name, and reads.
	if err := os.Remove(secret); err != nil {
		t.Fatal(err)
	}
	r, err = fetchSpec(t, adapters.Spec{Type: "filesystem", Path: "docs/notes.md"}, env)
	if err != nil || string(r.Content) != "PRIVATE KEY 7d1e" {
		t.Fatalf("one name: %q, %v", r.Content, err)
	}
}
