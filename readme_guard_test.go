package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMEGuardBlocks: the README's "A guarded shared remote" shell blocks
// are the files readme_guard.txtar runs, byte for byte.
func TestREADMEGuardBlocks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start := strings.Index(text, "### A guarded shared remote")
	if start < 0 {
		t.Fatal(`README.md has no "### A guarded shared remote" section`)
	}
	sec := text[start:]
	if end := strings.Index(sec[4:], "\n### "); end > 0 {
		sec = sec[:end+4]
	}
	blocks := regexp.MustCompile("(?s)```bash\n(.*?)```").FindAllStringSubmatch(sec, -1)
	ar, err := txtar.ParseFile("testdata/script/readme_guard.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	names := []string{"init.sh", "manual.sh"}
	if len(blocks) < len(names) {
		t.Fatalf("the README section holds %d bash blocks, want at least %d", len(blocks), len(names))
	}
	for i, n := range names {
		if files[n] != blocks[i][1] {
			t.Errorf("README bash block %d differs from %s in readme_guard.txtar:\nREADME:\n%s\nscript:\n%s", i+1, n, blocks[i][1], files[n])
		}
	}
}
