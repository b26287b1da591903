package layering

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
)

const mod = "github.com/readproof/readproof"

// pkg is what go list reports for one package.
type pkg struct {
	path    string
	dir     string
	goFiles []string // its non-test Go files, in dir
	imports []string // direct imports
	deps    []string // every package it reaches, transitively
}

// listed is one `go list` of the module, shared by the tests here (each
// run of the go command costs a few tenths of a second of CPU).
var listed struct {
	once sync.Once
	pkgs map[string]pkg
	err  string
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	goBin := goTool(t)
	listed.once.Do(func() { listed.pkgs, listed.err = goList(goBin) })
	if listed.err != "" {
		t.Fatal(listed.err)
	}
	return listed.pkgs
}

func goList(goBin string) (map[string]pkg, string) {
	cmd := exec.Command(goBin, "list", "-f", "{{.ImportPath}}\t{{.Dir}}\t{{join .GoFiles \" \"}}\t{{join .Imports \" \"}}\t{{join .Deps \" \"}}", mod+"/...")
	out, err := cmd.Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return nil, fmt.Sprintf("go list: %v\n%s", err, ee.Stderr)
		}
		return nil, fmt.Sprintf("go list: %v", err)
	}
	pkgs := map[string]pkg{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			return nil, fmt.Sprintf("go list line %q", line)
		}
		pkgs[f[0]] = pkg{path: f[0], dir: f[1], goFiles: strings.Fields(f[2]), imports: strings.Fields(f[3]), deps: strings.Fields(f[4])}
	}
	if len(pkgs) < 10 {
		return nil, fmt.Sprintf("go list found %d packages: is the test running inside the module?", len(pkgs))
	}
	return pkgs, ""
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
	"adapters/sourcespec": {"internal/progress", "internal/text"},
	"internal/text":       {},
	"internal/strictjson": {"internal/text"},
	"internal/markdown":   {},
	"internal/hint":       {},
	"internal/buildinfo":  {},
	"internal/progress":   {},
	"internal/lockfile":   {"internal/diskfull", "internal/hint", "internal/progress", "internal/text"},
	"internal/keyfile":    {"gitstore/gitobj", "internal/fspath"},
	"internal/fspath":     {},
	"internal/diskfull":   {},
	"identity":            {"gitstore/gitobj", "internal/text"},
	"manifest":            {"identity", "internal/strictjson", "internal/text"},
	// an auditor's verifier builds on evidence alone
	"evidence":             {"gitstore/gitobj", "internal/keyfile", "internal/strictjson", "internal/text"},
	"probe":                {"internal/keyfile", "internal/text"},
	"receipts":             {"gitstore/gitobj", "identity", "internal/keyfile", "internal/strictjson", "internal/text"},
	"internal/policy":      {"adapters/sourcespec", "identity", "internal/fspath", "internal/lockfile", "internal/progress", "internal/text"},
	"gitstore":             {"gitstore/gitobj", "internal/diskfull", "internal/fspath", "internal/hint", "internal/lockfile", "internal/progress", "internal/text"},
	"adapters":             {"adapters/sourcespec", "gitstore", "internal/fspath"},
	"adapters/adaptertest": {"adapters"},
	"internal/layering":    {},
	"internal/mcpauth":     {"identity", "internal/keyfile", "internal/lockfile", "internal/progress"},
	// every layer may start spans; telemetry depends on none of them
	"internal/telemetry": {},
}

// noGoGit lists packages that must not reach go-git (nor gitstore) at all.
var noGoGit = []string{
	"gitstore/gitobj", "adapters/sourcespec", "internal/text", "internal/strictjson", "internal/hint", "internal/keyfile", "internal/fspath",
	"internal/markdown", "identity", "manifest", "evidence", "probe", "receipts", "internal/policy",
	"internal/mcpauth", "internal/lockfile", "internal/diskfull",
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
	// the OpenTelemetry SDK is built only by telemetry (the API is free)
	"go.opentelemetry.io/otel/sdk": {"internal/telemetry"},
	"github.com/rhysd/actionlint":  {},
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

// heavyDeps are packages no package of the module may reach (tests may):
// each costs every readproof process start-up time or binary size for
// nothing it uses (docs/startup.md). go-git's root package, transport/client
// and transport/file bring its in-process server, revision walker and object
// model; plumbing/object brings go-git's diff code and ProtonMail's OpenPGP,
// whose elliptic-curve tables are built at every start. gitstore has its own
// codecs (objcodec.go) and imports the transports it uses one by one
// (mirror.go).
var heavyDeps = []string{
	"github.com/go-git/go-git/v5",
	"github.com/go-git/go-git/v5/plumbing/object",
	"github.com/go-git/go-git/v5/plumbing/transport/client",
	"github.com/go-git/go-git/v5/plumbing/transport/file",
	"github.com/go-git/go-git/v5/plumbing/transport/server",
	"github.com/ProtonMail/go-crypto/",
	"github.com/cloudflare/circl/",
}

func TestNoHeavyDeps(t *testing.T) {
	for _, p := range listPackages(t) {
		for _, d := range p.deps {
			for _, h := range heavyDeps {
				if d == h || strings.HasSuffix(h, "/") && strings.HasPrefix(d, h) {
					t.Errorf("%s reaches %s: it costs every process start-up time (docs/startup.md); use what gitstore already has", short(p.path), d)
				}
			}
		}
	}
}

// TestProductNotTesting: the readproof binary does not link the testing
// package (its initialisation and its flag and runtime/debug machinery would
// be paid by every process). Helpers for other packages' tests that live in
// a product package, as gitstore's NewTestStore, GitCommand and Fsck do,
// take an interface of their own (gitstore.TB) instead of testing.TB.
func TestProductNotTesting(t *testing.T) {
	root, ok := listPackages(t)[mod]
	if !ok {
		t.Fatalf("go list did not report the root package %s", mod)
	}
	if len(root.deps) < 50 {
		t.Fatalf("go list reports %d dependencies of the root package: the check below would prove nothing", len(root.deps))
	}
	for _, d := range root.deps {
		if d == "testing" {
			t.Errorf("the readproof binary links the testing package; find the importer with `go list -deps -f '{{.ImportPath}} {{join .Imports \" \"}}' . | grep -w testing` and give its helpers an interface of their own (as gitstore.TB)")
		}
	}
}

// TestRawWriterOnlyInShare: the store's raw repository (store.Git(), every
// object and ref write) is handed to internal/share only; other packages use
// store.Objects() (read-only) or the store's own operations. Tests may use
// it to plant corruption.
func TestRawWriterOnlyInShare(t *testing.T) {
	call := regexp.MustCompile(`\.Git\(\)`)
	for _, p := range listPackages(t) {
		sp := short(p.path)
		if sp == "internal/share" || sp == "internal/store" {
			continue
		}
		for _, name := range p.goFiles {
			data, err := os.ReadFile(filepath.Join(p.dir, name))
			if err != nil {
				t.Fatal(err)
			}
			if loc := call.FindIndex(data); loc != nil {
				line := 1 + strings.Count(string(data[:loc[0]]), "\n")
				t.Errorf("%s/%s:%d calls .Git(): only internal/share gets the raw repository; use store.Objects(), store.Receipts() or a store operation", sp, name, line)
			}
		}
	}
}

// goTool is the go command: the one on PATH, else the one in the GOROOT that
// `go env` would report (GOROOT set by go test).
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	if root := os.Getenv("GOROOT"); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	t.Skip("no go command on PATH and GOROOT unset: the import rules cannot be listed")
	return ""
}

// TestArchitectureNamesEveryPackage: docs/architecture.md's package table
// has a row for every package of the module, so a new package comes with
// the sentence that says what it owns.
func TestArchitectureNamesEveryPackage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	name := regexp.MustCompile("`([^`]+)`")
	for _, row := range regexp.MustCompile(`(?m)^\| ([^|]+) \|`).FindAllStringSubmatch(string(data), -1) {
		for _, m := range name.FindAllStringSubmatch(row[1], -1) {
			rows[m[1]] = true // "`internal/testproc`, `internal/testsize`" names two
		}
	}
	var missing []string
	for p := range listPackages(t) {
		if sp := short(p); !rows[sp] {
			missing = append(missing, sp)
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("docs/architecture.md has no row for %s: add one to its package table", strings.Join(missing, ", "))
	}
}
