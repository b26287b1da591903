package commands

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// commandPaths lists every command path of the tree, hidden ones included
// ("tag", "tag list", ...).
func commandPaths(cs []*cli.Command, prefix []string) [][]string {
	var out [][]string
	for _, c := range cs {
		p := append(append([]string{}, prefix...), c.Name)
		out = append(out, p)
		out = append(out, commandPaths(c.Subcommands, p)...)
	}
	return out
}

// TestHelpEveryCommand walks the command tree: `readproof help PATH...` and
// `readproof PATH... --help` exit 0 and print a usage line naming the full
// command path (issue 15: "help CMD" answered "No help topic").
func TestHelpEveryCommand(t *testing.T) {
	paths := commandPaths(newApp(nil, nil, nil).Commands, nil)
	if len(paths) < 60 {
		t.Fatalf("only %d command paths: is the tree walked?", len(paths))
	}
	for _, p := range paths {
		name := strings.Join(p, " ")
		forms := [][]string{append([]string{"help"}, p...), append(append([]string{}, p...), "--help")}
		if len(p) > 1 { // tag help set
			forms = append(forms, append(append(append([]string{}, p[:len(p)-1]...), "help"), p[len(p)-1]))
		}
		for _, args := range forms {
			var out, errb bytes.Buffer
			code := Main(append([]string{"readproof"}, args...), strings.NewReader(""), &out, &errb)
			if code != ExitOK {
				t.Errorf("readproof %s: exit %d, stderr %q", strings.Join(args, " "), code, errb.String())
				continue
			}
			if !strings.Contains(out.String(), "USAGE:\n   readproof "+name+" ") && !strings.Contains(out.String(), "USAGE:\n   readproof "+name+"\n") {
				t.Errorf("readproof %s: the usage does not name %q:\n%s", strings.Join(args, " "), "readproof "+name, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	if code := Main([]string{"readproof", "help"}, strings.NewReader(""), &out, &errb); code != ExitOK || !strings.Contains(out.String(), "COMMANDS:") {
		t.Errorf("readproof help: exit %d, output %q", code, out.String())
	}
}

// TestFlagPlaceholders: urfave/cli turns the first `quoted` text of a flag's
// usage into its placeholder (--manifest ID); a phrase there rendered as
// "--manifest conflicts list" (issue 15).
func TestFlagPlaceholders(t *testing.T) {
	placeholder := regexp.MustCompile("^[A-Z][A-Z0-9_|-]*$")
	var walk func(path string, cs []*cli.Command)
	walk = func(path string, cs []*cli.Command) {
		for _, c := range cs {
			p := strings.TrimSpace(path + " " + c.Name)
			for _, f := range c.Flags {
				df, ok := f.(cli.DocGenerationFlag)
				if !ok {
					continue
				}
				u := df.GetUsage()
				if i := strings.IndexByte(u, '`'); i >= 0 {
					if j := strings.IndexByte(u[i+1:], '`'); j >= 0 && !placeholder.MatchString(u[i+1:i+1+j]) {
						t.Errorf("readproof %s --%s: the usage quotes %q, which becomes the flag's placeholder", p, f.Names()[0], u[i+1:i+1+j])
					}
				}
			}
			walk(p, c.Subcommands)
		}
	}
	walk("", newApp(nil, nil, nil).Commands)
}

// TestHelpListsGroupsInOrder: `readproof --help` lists the commands grouped
// by task in commandList's order, not urfave/cli's alphabetical one.
func TestHelpListsGroupsInOrder(t *testing.T) {
	var out, errb bytes.Buffer
	if code := Main([]string{"readproof", "--help"}, strings.NewReader(""), &out, &errb); code != ExitOK {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	last := -1
	for _, g := range []string{"record:", "inspect:", "share:", "prove:", "agent:", "store:", "help:"} {
		i := strings.Index(out.String(), "\n   "+g+"\n")
		if i < 0 || i < last {
			t.Fatalf("group %q missing or out of order in:\n%s", g, out.String())
		}
		last = i
	}
	for _, c := range newApp(nil, nil, nil).Commands {
		if !c.Hidden && !strings.Contains(out.String(), "\n     "+c.Name+" ") {
			t.Errorf("--help does not list %s", c.Name)
		}
	}
}

// TestCompletionArgsNameCommands keeps completionArgs in step with the
// command tree.
func TestCompletionArgsNameCommands(t *testing.T) {
	known := map[string]bool{}
	for _, p := range commandPaths(newApp(nil, nil, nil).Commands, nil) {
		known[strings.Join(p, " ")] = true
	}
	for path := range completionArgs() {
		if !known[path] {
			t.Errorf("completionArgs names %q, which is not a command", path)
		}
	}
}

// TestManPageCurrent fails when docs/man/readproof.1 is not what the
// command definitions generate. Regenerate: go run . man docs/man
func TestManPageCurrent(t *testing.T) {
	page, err := ManPage()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "..", "docs", "man", "readproof.1")
	if os.Getenv("READPROOF_UPDATE_MAN") != "" {
		if err := os.WriteFile(path, []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	have, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (generate it: go run . man docs/man)", err)
	}
	if string(have) != page {
		t.Fatalf("%s is stale: regenerate it with `go run . man docs/man`", path)
	}
	for _, p := range commandPaths(newApp(nil, nil, nil).Commands, nil) {
		if !strings.Contains(page, strings.Join(p, " ")) && !strings.Contains(page, p[len(p)-1]) {
			t.Errorf("the man page does not mention %s", strings.Join(p, " "))
		}
	}
}

// TestIsCompletion: the protocol flag ends a request only before any "--"
// (exec passes the words after it on to the command it runs).
func TestIsCompletion(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"readproof", "--generate-bash-completion"}, true},
		{[]string{"readproof", "tag", "--generate-bash-completion"}, true},
		{[]string{"readproof", "exec", "--session", "s", "--", "echo", "--generate-bash-completion"}, false},
		{[]string{"readproof", "tag", "list"}, false},
		{[]string{"readproof"}, false},
	} {
		if _, got := isCompletion(tc.args); got != tc.want {
			t.Errorf("isCompletion(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

// TestManPageHasWhatHelpShows: what `--help` shows and README.md documents
// is in the manual page too: every flag's environment variable (`--help`
// prints [$READPROOF_STORE]), the global --version, and the exit codes of
// README.md's "Exit codes" table, each with the README's meaning.
func TestManPageHasWhatHelpShows(t *testing.T) {
	page, err := ManPage()
	if err != nil {
		t.Fatal(err)
	}
	plain := strings.NewReplacer(`\fB`, "", `\fR`, "", `\fP`, "", `\fI`, "", `\-`, "-", "`", "").Replace
	text := plain(page)
	app := newApp(nil, nil, nil)
	var walk func(prefix string, flags []cli.Flag, cs []*cli.Command)
	n := 0
	walk = func(prefix string, flags []cli.Flag, cs []*cli.Command) {
		for _, f := range flags {
			ev, ok := f.(interface{ GetEnvVars() []string })
			if !ok {
				continue
			}
			for _, v := range ev.GetEnvVars() {
				n++
				if !strings.Contains(text, v) {
					t.Errorf("`readproof %s--help` shows --%s [$%s]; the man page does not name $%s", prefix, f.Names()[0], v, v)
				}
			}
		}
		for _, c := range cs {
			walk(prefix+c.Name+" ", c.Flags, c.Subcommands)
		}
	}
	walk("", app.Flags, app.Commands)
	if n < 3 {
		t.Fatalf("found %d environment variables on flags: is the tree walked?", n)
	}
	if !strings.Contains(text, "--version, -v") {
		t.Error("readproof --help lists --version, -v; the man page does not")
	}
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "\n## Exit codes\n")
	if !ok {
		t.Fatal("README.md has no Exit codes section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	_, section, ok := strings.Cut(text, ".SH EXIT STATUS\n")
	if !ok {
		t.Fatal("the man page has no EXIT STATUS section")
	}
	section, _, _ = strings.Cut(section, "\n.SH ")
	codes := 0
	for _, m := range regexp.MustCompile(`(?m)^\| (\d+) \| (.+) \|$`).FindAllStringSubmatch(table, -1) {
		codes++
		if want := m[1] + "\n" + plain(m[2]); !strings.Contains(section, want) {
			t.Errorf("README.md's exit code %s (%s) is not in the man page's EXIT STATUS as %q:\n%s", m[1], m[2], want, section)
		}
	}
	if codes < 8 {
		t.Fatalf("found %d exit codes in README.md's table", codes)
	}
}

// TestManPageNamesTheEnvironment: every READPROOF_ variable the commands
// read, not only those behind a flag (the keys, the MCP token file, the
// lock timings, the readproof a hook runs), is in the man page's
// ENVIRONMENT. Found in the source, so a variable added later is held too;
// left out are those for readproof's own developers and tests.
func TestManPageNamesTheEnvironment(t *testing.T) {
	page, err := ManPage()
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(page, "\n.SH ENVIRONMENT\n")
	if !ok {
		t.Fatal("the man page has no ENVIRONMENT section")
	}
	section, _, _ = strings.Cut(section, "\n.SH ")
	developers := map[string]bool{"READPROOF_CPUPROFILE": true, "READPROOF_MEMPROFILE": true, "READPROOF_LONG_TESTS": true}
	seen := map[string]bool{}
	name := regexp.MustCompile(`"(READPROOF_[A-Z0-9_]+)"|\$\{(READPROOF):-`)
	for _, dir := range []string{".", filepath.Join("..", "keyloc"), filepath.Join("..", "..")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range name.FindAllStringSubmatch(string(src), -1) {
				v := m[1] + m[2]
				if developers[v] || seen[v] {
					continue
				}
				seen[v] = true
				if !strings.Contains(section, `\fB`+v+`\fR`) {
					t.Errorf("%s reads $%s; the man page's ENVIRONMENT does not name it", f, v)
				}
			}
		}
	}
	if len(seen) < 8 {
		t.Fatalf("found %d variables in the source: %v", len(seen), seen)
	}
}
