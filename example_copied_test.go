package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"
)

// TestExampleCopied runs testdata/example with the repository's
// readproof.toml.example in each script's $WORK, as a user who cloned the
// repository and copied it would have it.
func TestExampleCopied(t *testing.T) {
	example, err := os.ReadFile("readproof.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	p := scriptParams(t, "testdata/example")
	setup := p.Setup
	p.Setup = func(e *testscript.Env) error {
		if err := setup(e); err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(e.WorkDir, "readproof.toml.example"), example, 0o644)
	}
	testscript.Run(t, p)
}
