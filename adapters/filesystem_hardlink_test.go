//go:build unix

package adapters_test

import (
	"os"
	"os/exec"
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

// The refusal's hint names the file by its absolute path, quoted for sh,
// and its commands, run as given from another directory, give a document
// whose name holds a space and a quote a name of its own: it then reads.
// It says first how to list the other names, one of which may be the
// file outside the roots.
func TestFilesystemHardLinkHintRuns(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	base := t.TempDir()
	root := filepath.Join(base, "docs")
	if err := os.Mkdir(root, 0o755); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(base, "elsewhere.md")
	if err := os.WriteFile(other, []byte("shared notes"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(root, "it's my notes.md")
	if err := os.Link(other, doc); err != nil {
		t.Skipf("link: %v", err)
	}
	env := adapters.Env{BaseDir: base, Roots: []string{root}}
	spec := adapters.Spec{Type: "filesystem", Path: "docs/it's my notes.md"}
	_, err = fetchSpec(t, spec, env)
	wantRefused(t, err, adapters.RuleRoots)
	msg := err.Error()
	if !strings.Contains(msg, "-samefile '"+strings.ReplaceAll(doc, "'", `'\''`)+"'") {
		t.Errorf("%q does not say how to list the file's other names", msg)
	}
	i := strings.Index(msg, "cp '")
	if i < 0 {
		t.Fatalf("%q gives no command", msg)
	}
	cmd := exec.Command(sh, "-c", msg[i:])
	cmd.Dir = t.TempDir()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the hint's command %q: %v\n%s", msg[i:], err, out)
	}
	r, err := fetchSpec(t, spec, env)
	if err != nil || string(r.Content) != "shared notes" {
		t.Fatalf("after the hint's command: %q, %v", r.Content, err)
	}
}
