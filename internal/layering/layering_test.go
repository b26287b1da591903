package layering

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
)

const mod = "github.com/readproof/readproof"

// pkg is what go list reports for one package.
type pkg struct {
	path    string
	imports []string // direct imports
	deps    []string // every package it reaches, transitively
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.Command(goBin, "list", "-f", "{{.ImportPath}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", mod+"/...")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		pkgs[f[0]] = pkg{path: f[0], imports: strings.Fields(f[1]), deps: strings.Fields(f[2])}
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list found %d packages: is the test running inside the module?", len(pkgs))
	}
	return pkgs
}

// short drops the module prefix: "internal/policy", "" for the root.
func short(p string) string {
	if p == mod {
		return "."
	}
	return strings.TrimPrefix(p, mod+"/")
}

func internalTo(p string) bool { return p == mod || strings.HasPrefix(p, mod+"/") }

func isGoGit(p string) bool { return strings.HasPrefix(p, "github.com/go-git/") }

// exactImports is the allow-list of module-internal imports for the packages
// below the CLI: the domain packages, the leaves and gitstore. Each may
// import these and nothing else of the module (the standard library and
// third-party modules are checked by the rules in TestLayering).
var exactImports = map[string][]string{
	"gitstore/gitobj":     {},
	"adapters/sourcespec": {},
	"internal/text":       {},
	"internal/hint":       {},
	"internal/keyfile":    {"gitstore/gitobj", "internal/fspath"},
	"internal/fspath":     {},
	"identity":            {"gitstore/gitobj"},
	"manifest":            {"identity", "internal/text"},
	// an auditor's verifier builds on evidence alone
	"evidence":             {"gitstore/gitobj", "internal/keyfile", "internal/text"},
	"probe":                {"internal/keyfile", "internal/text"},
	"receipts":             {"gitstore/gitobj", "identity", "internal/keyfile", "internal/text"},
	"internal/policy":      {"adapters/sourcespec", "identity"},
	"gitstore":             {"gitstore/gitobj", "internal/hint"},
	"adapters":             {"adapters/sourcespec", "gitstore", "internal/fspath"},
	"adapters/adaptertest": {"adapters"},
	"internal/layering":    {},
}

// noGoGit lists packages that must not reach go-git (nor gitstore) at all.
var noGoGit = []string{
	"gitstore/gitobj", "adapters/sourcespec", "internal/text", "internal/hint", "internal/keyfile", "internal/fspath",
	"identity", "manifest", "evidence", "probe", "receipts", "internal/policy",
}

// cliOnly may be imported only by the packages listed with them.
var cliOnly = map[string][]string{
	"internal/commands":  {"."},
	"internal/mcpserver": {".", "internal/commands"},
}

// thirdPartyOnly confines a third-party module to the packages named.
var thirdPartyOnly = map[string][]string{
	"github.com/go-git/":               {"gitstore"},
	"github.com/urfave/cli":            {".", "internal/commands"},
	"github.com/modelcontextprotocol/": {"internal/mcpserver", "internal/commands", "."},
	"github.com/BurntSushi/toml":       {"internal/policy"},
}

func TestLayering(t *testing.T) {
	pkgs := listPackages(t)
	var paths []string
	for p := range pkgs {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	contains := func(list []string, s string) bool {
		for _, v := range list {
			if v == s {
				return true
			}
		}
		return false
	}

	for _, p := range paths {
		sp, info := short(p), pkgs[p]

		// Only the packages named may import a confined third-party module.
		for prefix, allowed := range thirdPartyOnly {
			for _, imp := range info.imports {
				if strings.HasPrefix(imp, prefix) && !contains(allowed, sp) {
					t.Errorf("%s imports %s: only %s may (docs/architecture.md)", sp, imp, strings.Join(allowed, ", "))
				}
			}
		}

		// go-git is reached only through gitstore.
		if sp != "gitstore" {
			viaGitstore := contains(info.deps, mod+"/gitstore")
			for _, d := range info.deps {
				if isGoGit(d) && !viaGitstore {
					t.Errorf("%s reaches %s without going through gitstore", sp, d)
					break
				}
			}
		}

		// CLI packages are imported only from above.
		for cli, allowed := range cliOnly {
			if contains(info.imports, mod+"/"+cli) && !contains(allowed, sp) {
				t.Errorf("%s imports %s: only %s may; move what it needs into a domain package", sp, cli, strings.Join(allowed, ", "))
			}
		}

		// The exact allow-list below the CLI.
		if allowed, ok := exactImports[sp]; ok {
			for _, imp := range info.imports {
				if internalTo(imp) && !contains(allowed, short(imp)) {
					t.Errorf("%s imports %s; it may import only %v of this module", sp, short(imp), allowed)
				}
			}
		}
	}

	for _, sp := range noGoGit {
		info, ok := pkgs[mod+"/"+sp]
		if !ok {
			t.Errorf("package %s is gone: update the layering rules and docs/architecture.md", sp)
			continue
		}
		var bad []string
		for _, d := range info.deps {
			if isGoGit(d) || d == mod+"/gitstore" {
				bad = append(bad, d)
			}
		}
		if len(bad) > 0 {
			t.Errorf("%s must not reach gitstore or go-git, but `go list -deps` shows %d such packages (first %s)", sp, len(bad), bad[0])
		}
	}
}
