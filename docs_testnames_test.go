package main

import (
	"io/fs"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsNameTestsThatExist: every test, benchmark and fuzz target README.md
// and docs/*.md name (as the test that holds a behaviour, or a measurement's
// benchmark) is a function of a _test.go file of the module, so a renamed or
// removed test cannot go on vouching for a sentence. A name given to -run
// may be the prefix of the tests it selects (`-run TestMarkdown`).
func TestDocsNameTestsThatExist(t *testing.T) {
	t.Parallel()
	funcs := map[string]bool{}
	decl := regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)[A-Za-z0-9_]*)\(`)
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(path, "_test.go") {
			for _, m := range decl.FindAllStringSubmatch(string(readFile(t, path)), -1) {
				funcs[m[1]] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(funcs) < 500 {
		t.Fatalf("found %d test functions: is the walk still reaching the packages?", len(funcs))
	}
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	name := regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z][A-Za-z0-9_]*`)
	named := 0
	for _, p := range append([]string{"README.md"}, pages...) {
		text := string(readFile(t, p))
		for _, n := range name.FindAllString(text, -1) {
			named++
			if funcs[n] || selectsTests(text, n, funcs) {
				continue
			}
			t.Errorf("%s names %s, which no _test.go declares: name the test that holds it now", p, n)
		}
	}
	if named < 100 {
		t.Fatalf("found %d test names in the pages: the pattern no longer matches how they write them", named)
	}
}

// selectsTests says whether the page gives n to -run, where it selects the
// tests whose names start with it.
func selectsTests(text, n string, funcs map[string]bool) bool {
	if !strings.Contains(text, "-run "+n) && !strings.Contains(text, "-run '"+n) {
		return false
	}
	for f := range funcs {
		if strings.HasPrefix(f, n) {
			return true
		}
	}
	return false
}

// TestDocsNameScriptsThatExist: every script README.md and docs/*.md name
// (testdata/script/NAME.txtar, NAME.txtar alone, a glob such as
// evidence_export_forged*.txtar, or -run 'TestScript/NAME', which selects
// the scripts of TestScripts whose names hold NAME) is a file of
// testdata/, so a renamed or removed script cannot go on vouching for a
// sentence. TestDocsNameTestsThatExist sees only "TestScript" there.
func TestDocsNameScriptsThatExist(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	file := regexp.MustCompile(`[A-Za-z0-9_*./-]+\.txtar\b`)
	run := regexp.MustCompile(`\bTestScript/([A-Za-z0-9_-]+)`)
	named := 0
	for _, p := range append([]string{"README.md"}, pages...) {
		text := string(readFile(t, p))
		for _, f := range file.FindAllString(text, -1) {
			named++
			pattern := filepath.FromSlash(f)
			if !strings.Contains(f, "/") {
				pattern = filepath.Join("testdata", "*", f)
			}
			if m, err := filepath.Glob(pattern); err != nil || len(m) == 0 {
				t.Errorf("%s names %s, which testdata/ does not hold: name the script that holds it now", p, f)
			}
		}
		for _, m := range run.FindAllStringSubmatch(text, -1) {
			named++
			if g, err := filepath.Glob(filepath.Join("testdata", "script", "*"+m[1]+"*.txtar")); err != nil || len(g) == 0 {
				t.Errorf("%s names %s, which selects no testdata/script/*%s*.txtar: name the script that holds it now", p, m[0], m[1])
			}
		}
	}
	if named < 40 {
		t.Fatalf("found %d script names in the pages: the patterns no longer match how they write them", named)
	}
}
