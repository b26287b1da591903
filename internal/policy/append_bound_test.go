package policy

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters/sourcespec"
)

// TestAppendKeepsBound: resource add does not write a policy file larger
// than MaxFileBytes, which every command would then refuse (Open): the
// file is left as it was and the error names the bound. A resource that
// fits is added.
func TestAppendKeepsBound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	path := filepath.Join(t.TempDir(), DefaultFileName)
	head := "version = 1\n# "
	pad := MaxFileBytes - len(head) - 200 // room for one short block
	old := []byte(head + strings.Repeat("x", pad) + "\n")
	if err := os.WriteFile(path, old, 0o644); err != nil {
		t.Fatal(err)
	}
	add := func(u string) error {
		return AppendResource(path, Resource{URI: mustURI(t, u),
			Source: sourcespec.Spec{Type: "filesystem", Path: "doc.md"}, Freshness: Freshness{Strategy: RequireFresh}})
	}
	if err := add("readproof://demo/doc"); err != nil {
		t.Fatalf("a resource that fits: %v", err)
	}
	fits, err := os.ReadFile(path)
	if err != nil || len(fits) > MaxFileBytes {
		t.Fatalf("after the first add: %d bytes, %v", len(fits), err)
	}
	err = add("readproof://demo/" + strings.Repeat("d", 200))
	var pe *Error
	if !errors.As(err, &pe) || !strings.Contains(pe.Msg, "more than the 16 MiB a policy file may be; nothing was written") || !strings.Contains(pe.Hint, "at most 16 MiB") {
		t.Errorf("a resource that takes the file past the bound: %v", err)
	}
	if now, err := os.ReadFile(path); err != nil || !bytes.Equal(now, fits) {
		t.Errorf("the policy file changed: %d bytes, %v", len(now), err)
	}
	if _, err := Load(path); err != nil {
		t.Errorf("the policy file no longer loads: %v", err)
	}
}
