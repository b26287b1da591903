package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestCheckKindsDocumented (session 25, verifyedges): the kinds `evidence
// verify --json` gives its checks are the Kind constants of the packages
// that make the checks (evidence: the bundle's own, internal/store: the
// store's), and docs/json.md lists exactly those, so a kind added to the
// code cannot reach a script undocumented, nor a documented one be dropped.
func TestCheckKindsDocumented(t *testing.T) {
	t.Parallel()
	var declared []string
	for _, dir := range []string{"../../evidence", "../store"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range files {
			if strings.HasSuffix(name, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			declared = append(declared, kindConsts(t, name, f)...)
		}
	}
	if len(declared) < 6 {
		t.Fatalf("found %d Kind constants (%v) in evidence and internal/store: teach this test where they are", len(declared), declared)
	}
	doc, err := os.ReadFile("../../docs/json.md")
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(doc), "<!-- check kinds: held by TestCheckKindsDocumented -->")
	list, _, ok2 := strings.Cut(rest, "<!-- end check kinds -->")
	if !ok || !ok2 {
		t.Fatal("docs/json.md: no list of check kinds between its markers")
	}
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^- `([a-z_]+)`").FindAllStringSubmatch(list, -1) {
		documented = append(documented, m[1])
	}
	slices.Sort(declared)
	slices.Sort(documented)
	if !slices.Equal(declared, documented) {
		t.Errorf("check kinds: the code declares %v, docs/json.md lists %v", declared, documented)
	}
}

// kindConsts are the values of the string constants named Kind... of f
// (file name), the kinds a check carries.
func kindConsts(t *testing.T, name string, f *ast.File) []string {
	var out []string
	for _, lit := range constLiterals(t, name, f, "Kind", token.STRING) {
		k, err := strconv.Unquote(lit)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, k)
	}
	return out
}

// constLiterals are the literal values, as written, of the constants of f
// (file name) whose names start with prefix; each must be a literal of
// kind, or the test stops, saying it cannot read it.
func constLiterals(t *testing.T, name string, f *ast.File, prefix string, kind token.Token) []string {
	t.Helper()
	var out []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			v := s.(*ast.ValueSpec)
			for i, n := range v.Names {
				if !strings.HasPrefix(n.Name, prefix) || i >= len(v.Values) {
					continue
				}
				lit, ok := v.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != kind {
					t.Fatalf("%s: %s is not a %s literal: teach this test to read it", name, n.Name, strings.ToLower(kind.String()))
				}
				out = append(out, lit.Value)
			}
		}
	}
	return out
}
