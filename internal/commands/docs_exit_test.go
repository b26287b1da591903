package commands

import (
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// TestExitCodesDocumented: the exit codes the commands declare (the Exit
// constants of app.go) are exactly the codes of README.md's "Exit codes"
// table and of the man page's EXIT STATUS (exitStatuses), so a code added
// to the program cannot go undocumented, nor a documented one be dropped
// from the program. TestManPageHasWhatHelpShows holds the meanings.
func TestExitCodesDocumented(t *testing.T) {
	t.Parallel()
	f, err := parser.ParseFile(token.NewFileSet(), "app.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []int
	for _, lit := range constLiterals(t, "app.go", f, "Exit", token.INT) {
		code, err := strconv.Atoi(lit)
		if err != nil {
			t.Fatal(err)
		}
		declared = append(declared, code)
	}
	if len(declared) < 8 {
		t.Fatalf("found %d Exit constants in app.go: is the const block still there?", len(declared))
	}
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README.md has no Exit codes section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	var documented []int
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \|`).FindAllStringSubmatch(table, -1) {
		code, _ := strconv.Atoi(m[1])
		documented = append(documented, code)
	}
	var man []int
	for _, e := range exitStatuses() {
		man = append(man, e.code)
	}
	slices.Sort(declared)
	if !slices.Equal(declared, documented) {
		t.Errorf("app.go declares the exit codes %v; README.md's Exit codes table lists %v", declared, documented)
	}
	if slices.Sort(man); !slices.Equal(declared, man) {
		t.Errorf("app.go declares the exit codes %v; the man page's EXIT STATUS (exitStatuses) lists %v", declared, man)
	}
}

// TestCLIDocHelpGroups: docs/cli.md's "Help" names the groups of
// `readproof --help` and, for each, its commands in the order --help lists
// them (commandGroups, hidden commands left out).
func TestCLIDocHelpGroups(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/cli.md")
	if err != nil {
		t.Fatal(err)
	}
	_, help, ok := strings.Cut(string(b), "\n## Help\n")
	if !ok {
		t.Fatal(`docs/cli.md has no "## Help" section`)
	}
	help, _, _ = strings.Cut(help, "\n## ")
	para := strings.Join(strings.Fields(help), " ")
	var doc []string
	for _, m := range regexp.MustCompile(`\*\*([a-z]+)\*\* \(([^)]*)\)`).FindAllStringSubmatch(para, -1) {
		doc = append(doc, m[1]+": "+m[2])
	}
	var want []string
	for _, g := range commandGroups() {
		var names []string
		for _, nc := range g.commands {
			if !nc.make().Hidden {
				names = append(names, nc.name)
			}
		}
		want = append(want, g.category+": "+strings.Join(names, ", "))
	}
	if !slices.Equal(doc, want) {
		t.Errorf("docs/cli.md's Help lists the groups\n\t%s\n`readproof --help` lists\n\t%s", strings.Join(doc, "\n\t"), strings.Join(want, "\n\t"))
	}
}
