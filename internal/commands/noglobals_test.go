package commands

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoPackageState keeps this package a thin layer: no init functions and
// no package-level variables, so every command is wired in commandList and
// gets what it needs through its options. Allowed: error sentinels made by
// errors.New or fmt.Errorf, and blank-identifier interface checks
// (var _ I = T{}).
func TestNoPackageState(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				if d.Recv == nil && d.Name.Name == "init" {
					t.Errorf("%s: func init: register the command in commandList instead", fset.Position(d.Pos()))
				}
			case *ast.GenDecl:
				if d.Tok != token.VAR {
					continue
				}
				for _, spec := range d.Specs {
					vs := spec.(*ast.ValueSpec)
					if why := refusedVar(vs); why != "" {
						t.Errorf("%s: var %s: %s", fset.Position(vs.Pos()), names(vs), why)
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no files checked")
	}
}

// refusedVar says why a package-level var is not allowed, or "".
func refusedVar(vs *ast.ValueSpec) string {
	if len(vs.Names) == 1 && vs.Names[0].Name == "_" && vs.Type != nil {
		return "" // interface check
	}
	if len(vs.Values) != len(vs.Names) {
		return "package-level mutable state: pass it through the command's options"
	}
	for _, v := range vs.Values {
		if !isErrorSentinel(v) {
			return "package-level mutable state: pass it through the command's options (only errors.New / fmt.Errorf sentinels may be package-level)"
		}
	}
	return ""
}

func isErrorSentinel(e ast.Expr) bool {
	call, ok := e.(*ast.CallExpr)
	if !ok {
		return false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := sel.X.(*ast.Ident)
	if !ok {
		return false
	}
	return (pkg.Name == "errors" && sel.Sel.Name == "New") || (pkg.Name == "fmt" && sel.Sel.Name == "Errorf")
}

func names(vs *ast.ValueSpec) string {
	var out []string
	for _, n := range vs.Names {
		out = append(out, n.Name)
	}
	return strings.Join(out, ", ")
}
