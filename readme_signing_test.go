package main

import (
	"strings"
	"testing"
)

// TestREADMESigningBlocks keeps testdata/script/readme_signing.txtar running
// the README's signing walkthrough exactly as written: its four script files
// must equal the four sh blocks of README.md from "### Signing" to
// "## Proof of read", in order.
func TestREADMESigningBlocks(t *testing.T) {
	t.Parallel()
	text := readREADME(t)
	start, end := strings.Index(text, "### Signing"), strings.Index(text, "## Proof of read")
	if start < 0 || end < start {
		t.Fatal(`README.md has no "### Signing" section before "## Proof of read"`)
	}
	blocks := readmeBlocks(text[start:end], "sh")
	names := []string{"keys.sh", "git-verify.sh", "dsse-verify.sh", "commit-verify.sh"}
	if len(blocks) != len(names) {
		t.Fatalf("README signing sections hold %d sh blocks, the script test runs %d: update readme_signing.txtar", len(blocks), len(names))
	}
	sameAsScript(t, blocks, "readme_signing.txtar", names)
}
