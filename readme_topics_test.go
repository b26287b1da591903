package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestREADMETopicPagesKeepTheBlocks: each topic page docs/README-*.md is one
// section of README.md told in full (its first line is the section's
// heading), and every fenced block the README's section shows is in the
// topic page as written, so the commands and configurations a reader copies
// are the same on both pages. Before session 24 the sync page had no
// guarded remote and the two pages differed in sentences that say what
// the commands do.
func TestREADMETopicPagesKeepTheBlocks(t *testing.T) {
	t.Parallel()
	readme := string(readFile(t, "README.md"))
	pages, err := filepath.Glob("docs/README-*.md")
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?s)\n```[a-z]*\n(.*?\n)```")
	blocks := 0
	for _, p := range pages {
		page := string(readFile(t, p))
		heading, _, _ := strings.Cut(page, "\n")
		if !strings.HasPrefix(heading, "## ") {
			t.Errorf("%s: the first line is %q, not the heading of the README section it tells", p, heading)
			continue
		}
		_, section, ok := strings.Cut(readme, "\n"+heading+"\n")
		if !ok {
			t.Errorf("%s: README.md has no section %q", p, heading)
			continue
		}
		section, _, _ = strings.Cut(section, "\n## ")
		for _, m := range fence.FindAllStringSubmatch(section, -1) {
			blocks++
			if !strings.Contains(page, "\n"+m[1]+"```") {
				first, _, _ := strings.Cut(m[1], "\n")
				t.Errorf("%s: README.md's %q shows a block the topic page does not have as written: %q", p, heading, first)
			}
		}
	}
	if len(pages) < 5 || blocks < 20 {
		t.Fatalf("found %d topic pages and %d README blocks: the patterns no longer match the pages", len(pages), blocks)
	}
}
