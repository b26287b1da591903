package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// TestMessagesNameNoGoIdentifiers scans every user-facing message template
// of the module (the string literals given to fmt.Errorf, errors.New,
// hint.With, usageError and the printing calls) for the names of the
// module's own exported Go functions, methods and types: a user reads
// `readproof receipts key init`, not CreateKey (issue 15: "create one with
// `readproof receipts key init` or CreateKey", "(CreateKeyFile)").
func TestMessagesNameNoGoIdentifiers(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	var files []*ast.File
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "examples" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files = append(files, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("only %d files parsed: is the module root %s?", len(files), root)
	}
	// CamelCase exported names (two capitals or more, not an acronym):
	// ordinary words such as Verify or Open are left alone.
	idents := map[string]bool{}
	camel := func(name string) bool {
		if !ast.IsExported(name) || strings.ToUpper(name) == name {
			return false
		}
		upper := 0
		for _, r := range name {
			if unicode.IsUpper(r) {
				upper++
			}
		}
		return upper >= 2
	}
	for _, f := range files {
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if camel(d.Name.Name) {
					idents[d.Name.Name] = true
				}
			case *ast.GenDecl:
				for _, s := range d.Specs {
					if ts, ok := s.(*ast.TypeSpec); ok && camel(ts.Name.Name) {
						idents[ts.Name.Name] = true
					}
				}
			}
		}
	}
	// Brand and protocol names that happen to be types too; and the
	// names in the errors of public packages that only a Go caller
	// misusing the API meets (no key built, arguments not set), which
	// tell that caller what to call. No command reaches them.
	for _, ok := range []string{"GitHub", "GitLab", "JSON", "DSSE",
		"LoadKey", "NewKey", "ArgvArgs", "JSONArgs", "BytesResult", "CommandResult", "ExecResult", "DeriveKeys", "NewRandomKeys", "HTTPOptions"} {
		delete(idents, ok)
	}
	messageFuncs := map[string]bool{"Errorf": true, "New": true, "With": true, "usageError": true, "say": true,
		"Fprintf": true, "Fprintln": true, "Fprint": true, "Printf": true, "Println": true}
	word := regexp.MustCompile(`[A-Za-z][A-Za-z0-9]*`)
	checked := 0
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			var name string
			switch fn := call.Fun.(type) {
			case *ast.Ident:
				name = fn.Name
			case *ast.SelectorExpr:
				name = fn.Sel.Name
			}
			if !messageFuncs[name] {
				return true
			}
			for _, a := range call.Args {
				// literals and the pieces of "..." + x + "..."
				var lits []*ast.BasicLit
				var walk func(e ast.Expr)
				walk = func(e ast.Expr) {
					switch e := e.(type) {
					case *ast.BasicLit:
						if e.Kind == token.STRING {
							lits = append(lits, e)
						}
					case *ast.BinaryExpr:
						walk(e.X)
						walk(e.Y)
					case *ast.ParenExpr:
						walk(e.X)
					}
				}
				walk(a)
				for _, lit := range lits {
					s, err := strconv.Unquote(lit.Value)
					if err != nil {
						continue
					}
					checked++
					for _, w := range word.FindAllString(s, -1) {
						if idents[w] {
							t.Errorf("%s: message %q names the Go identifier %s", fset.Position(lit.Pos()), s, w)
						}
					}
				}
			}
			return true
		})
	}
	if checked < 500 {
		t.Fatalf("only %d message templates checked", checked)
	}
}
