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
	t.Parallel()
	text := readREADME(t)
	start := strings.Index(text, "### A guarded shared remote")
	if start < 0 {
		t.Fatal(`README.md has no "### A guarded shared remote" section`)
	}
	sec := text[start:]
	if end := strings.Index(sec[4:], "\n### "); end > 0 {
		sec = sec[:end+4]
	}
	blocks := readmeBlocks(sec, "bash")
	names := []string{"init.sh", "manual.sh"}
	if len(blocks) < len(names) {
		t.Fatalf("the README section holds %d bash blocks, want at least %d", len(blocks), len(names))
	}
	sameAsScript(t, blocks, "readme_guard.txtar", names)
}

func readREADME(t *testing.T) string {
	t.Helper()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	return string(readme)
}

// readmeBlocks returns the bodies of the ```lang fenced blocks in sec.
func readmeBlocks(sec, lang string) []string {
	var blocks []string
	for _, m := range regexp.MustCompile("(?s)```"+lang+"\n(.*?)```").FindAllStringSubmatch(sec, -1) {
		blocks = append(blocks, m[1])
	}
	return blocks
}

// sameAsScript checks that blocks[i] is, byte for byte, the file names[i] of
// testdata/script/script.
func sameAsScript(t *testing.T, blocks []string, script string, names []string) {
	t.Helper()
	ar, err := txtar.ParseFile("testdata/script/" + script)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	for i, n := range names {
		if files[n] != blocks[i] {
			t.Errorf("README block %d differs from %s in %s:\nREADME:\n%s\nscript:\n%s", i+1, n, script, blocks[i], files[n])
		}
	}
}
