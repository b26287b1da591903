package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
)

// TestREADMESigningBlocks keeps testdata/script/readme_signing.txtar running
// the README's signing walkthrough exactly as written: its four script files
// must equal the four sh blocks of README.md from "### Signing" to
// "## Proof of read", in order.
func TestREADMESigningBlocks(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := string(readme)
	start, end := strings.Index(text, "### Signing"), strings.Index(text, "## Proof of read")
	if start < 0 || end < start {
		t.Fatal(`README.md has no "### Signing" section before "## Proof of read"`)
	}
	blocks := regexp.MustCompile("(?s)```sh\n(.*?)```").FindAllStringSubmatch(text[start:end], -1)
	ar, err := txtar.ParseFile("testdata/script/readme_signing.txtar")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, f := range ar.Files {
		files[f.Name] = string(f.Data)
	}
	names := []string{"keys.sh", "git-verify.sh", "dsse-verify.sh", "commit-verify.sh"}
	if len(blocks) != len(names) {
		t.Fatalf("README signing sections hold %d sh blocks, the script test runs %d: update readme_signing.txtar", len(blocks), len(names))
	}
	for i, n := range names {
		if files[n] != blocks[i][1] {
			t.Errorf("README sh block %d differs from %s in readme_signing.txtar:\nREADME:\n%s\nscript:\n%s", i+1, n, blocks[i][1], files[n])
		}
	}
}
