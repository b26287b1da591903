package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsReachableFromREADME: every page of docs/ can be found from
// README.md, by a link or a path written out (`docs/evidence.md`), on the
// README or on a page found that way. The topic pages docs/README-*.md
// tell README sections again (TestREADMETopicPagesKeepTheBlocks) and need
// no way in. Before session 29 docs/architecture.md was named by no page,
// and docs/observability.md (tracing) only in passing deep in the MCP page.
func TestDocsReachableFromREADME(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	exists := map[string]bool{}
	for _, p := range pages {
		exists[p] = true
	}
	if len(exists) < 10 {
		t.Fatalf("found %d pages in docs/: the glob no longer matches them", len(exists))
	}
	link := regexp.MustCompile(`\]\(([^)#\s]+\.md)`)
	mention := regexp.MustCompile(`(?:^|[^\w/.-])((?:docs/)?[\w-]+\.md)`)
	reached := map[string]bool{"README.md": true}
	todo := []string{"README.md"}
	for len(todo) > 0 {
		page := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		b := string(readFile(t, page))
		var names []string
		for _, m := range link.FindAllStringSubmatch(b, -1) {
			names = append(names, filepath.Join(filepath.Dir(page), m[1]))
		}
		for _, m := range mention.FindAllStringSubmatch(b, -1) {
			// written out from the root (docs/x.md) or beside the page (x.md)
			names = append(names, filepath.Clean(m[1]), filepath.Join("docs", filepath.Base(m[1])))
		}
		for _, n := range names {
			n = filepath.ToSlash(filepath.Clean(n))
			if exists[n] && !reached[n] {
				reached[n] = true
				todo = append(todo, n)
			}
		}
	}
	for _, p := range pages {
		p = filepath.ToSlash(p)
		if strings.HasPrefix(filepath.Base(p), "README-") {
			continue
		}
		if !reached[p] {
			t.Errorf("%s is linked or named by no page a reader finds from README.md: link it from the README (\"Further reading\") or from a page that is", p)
		}
	}
}
