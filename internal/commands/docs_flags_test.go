package commands

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"
)

// docPages are README.md and the topic pages, as paths from this package,
// and the other files a newcomer copies commands from: the skill the model
// reads, the examples' pages and the example policy file (before session
// 29 these were read by no check, so a renamed flag or subcommand could
// stay in them).
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	examples, err := filepath.Glob("../../examples/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(examples) == 0 {
		t.Fatal("no examples/*/README.md: the examples moved; name their pages here")
	}
	pages = append(pages, examples...)
	pages = append(pages, "../../skills/readproof/SKILL.md", "../../readproof.toml.example")
	return append([]string{"../../README.md"}, pages...)
}

// docsWrongOnPurpose are command lines the pages show in order to show
// readproof refusing them, by the page and the line's text.
var docsWrongOnPurpose = map[string]string{
	"docs/cli.md: $ readproof tag list --jsn readproof://demo/policies/refunds": "the example of an unknown flag and its did-you-mean hint",
}

// docCommand is one readproof command line a page shows: in a fenced or
// indented block, or in an inline code span.
type docCommand struct {
	page, line string
	words      []string // after "readproof"
}

// docCommands finds the readproof command lines of page: each
// `readproof ...` in a code block or an inline code span, up to the end of
// the span or line or a shell operator. The first column of README.md's
// "## Commands" table names commands without "readproof" and is read too.
func docCommands(t *testing.T, page string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(page, "../../")
	start := regexp.MustCompile(`(?:^|[\s(/$"'=])readproof((?:[ \t]+[^\s;&|)#'"` + "`" + `>]+)*)`)
	// the word before readproof when it runs readproof: none, a shell
	// operator, a prompt, an environment assignment (`claude mcp add
	// readproof ...` names a server instead)
	runs := regexp.MustCompile(`(?:^\s*|[(/"'=]|(?:^|\s)(?:\$|&&|\|\||\||;|!|then|do|exec|time|[A-Z_]+=\S*)\s+)$`)
	var out []docCommand
	add := func(line, cmd string) {
		for _, m := range start.FindAllStringSubmatchIndex(cmd, -1) {
			at := m[0]
			if at < len(cmd) && cmd[at] != 'r' {
				at++ // the character before readproof
			}
			if !runs.MatchString(cmd[:at]) {
				continue
			}
			out = append(out, docCommand{page: name, line: strings.TrimSpace(line), words: strings.Fields(cmd[m[2]:m[3]])})
		}
	}
	var prose strings.Builder
	fenced, prevBlank := false, true
	for _, line := range strings.Split(string(b), "\n") {
		switch {
		case strings.HasPrefix(line, "```"):
			fenced = !fenced
			prose.WriteString("\n")
		case fenced, strings.HasPrefix(line, "    ") && prevBlank && !strings.HasPrefix(strings.TrimSpace(line), "-"):
			add(line, line)
			prose.WriteString("\n")
			if !fenced {
				continue // prevBlank stays: the block goes on while its lines are indented
			}
		default:
			prose.WriteString(line + "\n")
		}
		prevBlank = strings.TrimSpace(line) == "" || (prevBlank && strings.HasPrefix(line, "    "))
	}
	text := prose.String()
	// ``x `y` z`` spans first, then `x`; a span may wrap once
	for _, re := range []*regexp.Regexp{regexp.MustCompile("``(.+?)``"), regexp.MustCompile("`([^`\n]+(?:\n[^`\n]+)?)`")} {
		for _, m := range re.FindAllStringSubmatch(text, -1) {
			span := strings.ReplaceAll(m[1], "\n", " ")
			add(span, span)
		}
		text = re.ReplaceAllString(text, " ")
	}
	if name == "README.md" {
		_, table, _ := strings.Cut(string(b), "\n## Commands\n")
		table, _, _ = strings.Cut(table, "\n## ")
		for _, row := range strings.Split(table, "\n") {
			first, _, ok := strings.Cut(strings.TrimPrefix(row, "| "), " | ")
			if !ok || !strings.HasPrefix(row, "| `") {
				continue
			}
			for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(strings.ReplaceAll(first, `\|`, "|"), -1) {
				out = append(out, docCommand{page: name, line: m[1], words: strings.Fields(m[1])})
			}
		}
	}
	return out
}

// flagNames are the names (and aliases) of flags.
func flagNames(flags []cli.Flag) map[string]cli.Flag {
	m := map[string]cli.Flag{}
	for _, f := range flags {
		for _, n := range f.Names() {
			m[n] = f
		}
	}
	return m
}

// checkDocCommand returns what is wrong with a documented command line: a
// subcommand readproof does not have, or a flag its command does not take.
func checkDocCommand(app *cli.App, words []string) []string {
	global := flagNames(app.Flags)
	for _, n := range []string{"help", "h", "version", "v", "generate-bash-completion"} {
		global[n] = nil
	}
	flag := regexp.MustCompile(`^--?([a-z][a-z0-9-]*)`)
	flagName := func(w string) (string, bool) {
		w = strings.TrimLeft(w, "[(")
		m := flag.FindStringSubmatch(w)
		if m == nil || w == "-" {
			return "", false
		}
		return m[1], true
	}
	// a word that names a command or subcommand
	commandName := regexp.MustCompile(`^[a-z][a-z-]*$`)
	var problems []string
	i := 0
	// global flags before the command
	for i < len(words) && strings.HasPrefix(words[i], "-") {
		n, ok := flagName(words[i])
		if !ok {
			break
		}
		f, known := global[n]
		if !known {
			problems = append(problems, fmt.Sprintf("--%s is not a global flag", n))
		}
		i++
		if f != nil && !strings.Contains(words[i-1], "=") && takesValue(f) {
			i++
		}
	}
	var cmd *cli.Command
	cmds, path := app.Commands, ""
	for ; i < len(words); i++ {
		w := words[i]
		if alts := strings.Split(w, "|"); len(alts) > 1 && cmd != nil && len(cmd.Subcommands) > 0 {
			// `remote init|add|list|rm`: each must be a subcommand
			for _, a := range alts {
				if commandName.MatchString(a) && findCommand(cmds, a) == nil {
					problems = append(problems, fmt.Sprintf("`readproof %s` has no subcommand %q", path, a))
				}
			}
			return problems
		}
		c := findCommand(cmds, w)
		if c == nil {
			switch {
			case cmd == nil && commandName.MatchString(w):
				problems = append(problems, fmt.Sprintf("readproof has no command %q", w))
			case cmd != nil && len(cmd.Subcommands) > 0 && cmd.Name != "run" && commandName.MatchString(w):
				problems = append(problems, fmt.Sprintf("`readproof %s` has no subcommand %q", path, w))
			}
			break
		}
		cmd, cmds, path = c, c.Subcommands, strings.TrimSpace(path+" "+c.Name)
	}
	if cmd == nil {
		return problems
	}
	own := flagNames(cmd.Flags)
	for ; i < len(words); i++ {
		w := words[i]
		if w == "--" || w == "-" || strings.HasPrefix(w, ">") || strings.HasPrefix(w, "2>") {
			break
		}
		n, ok := flagName(w)
		if !ok {
			continue
		}
		if _, known := own[n]; !known {
			if _, known := global[n]; !known {
				problems = append(problems, fmt.Sprintf("`readproof %s` has no flag --%s", path, n))
			}
		}
	}
	return problems
}

// TestDocsCommandsExist: every readproof command line README.md and
// docs/*.md show (in a code block, an indented block or an inline code
// span, and the first column of the README's Commands table) names
// subcommands readproof has and flags its command (or readproof itself)
// takes. A flag renamed or moved to another command, or a subcommand
// renamed, fails here until the pages follow; the `--help` of each command
// is made from the same definitions.
func TestDocsCommandsExist(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil, nil)
	seen, checked := map[string]bool{}, 0
	for _, page := range docPages(t) {
		for _, c := range docCommands(t, page) {
			checked++
			key := c.page + ": " + c.line
			if _, ok := docsWrongOnPurpose[key]; ok {
				seen[key] = true
				continue
			}
			if len(c.words) > 0 && strings.Contains(c.line, `"readproof `+c.words[0]) {
				continue // a quoted string naming readproof (a MAC's domain tag), not a command line
			}
			for _, p := range checkDocCommand(app, c.words) {
				t.Errorf("%s: %s\n\tin: %s", c.page, p, c.line)
			}
		}
	}
	t.Logf("checked %d readproof command lines", checked)
	if checked < 300 {
		t.Fatalf("found %d readproof command lines in the pages: the pattern no longer matches how they write them", checked)
	}
	for key := range docsWrongOnPurpose {
		if !seen[key] {
			t.Errorf("docsWrongOnPurpose names %q, which the pages no longer show", key)
		}
	}
}

// TestCheckDocCommandFindsDrift: the check of TestDocsCommandsExist fails a
// flag on the wrong command, an unknown flag or subcommand, and passes the
// forms the pages use.
func TestCheckDocCommandFindsDrift(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil, nil)
	for _, tc := range []struct {
		line string
		bad  bool
	}{
		{"verify --read-data", false},
		{"--store DIR verify --read-data-subset 1/7", false},
		{"evidence verify bundle.json --trusted-keys allowed_signers --json", false},
		{"remote init|add|list|rm", false},
		{"run --id run-a readproof://demo/policies/refunds", false},
		{"exec --session S -- go test --count=1 ./...", false},
		{"mcp token add ci --expires 30d", false},
		{"verify --offline", true},                // evidence verify's flag
		{"gc --grace-period 1h", true},            // no such flag
		{"remote init|add|list|remove-all", true}, // no such subcommand
		{"tag move URI prod", true},               // no such subcommand
		{"frobnicate --now", true},                // no such command
		{"--stor DIR verify", true},               // no such global flag
		{"mcp --http 127.0.0.1:0 --max-bytes 9", true},
	} {
		problems := checkDocCommand(app, strings.Fields(tc.line))
		if got := len(problems) > 0; got != tc.bad {
			t.Errorf("readproof %s: problems %q, want some: %v", tc.line, problems, tc.bad)
		}
	}
}

// TestDocsFlagDefaults: where a page states a flag's default, it is the
// default the flag has: the rows of a flag table (`| --flag ARG | default |
// meaning |`) and "`--flag N` ... (default N" in prose.
func TestDocsFlagDefaults(t *testing.T) {
	t.Parallel()
	app := newApp(nil, nil, nil)
	// every flag of every command, by name; a name on two commands with
	// different defaults is left out of the prose check
	byName := map[string][]cli.Flag{}
	var walk func(flags []cli.Flag, cmds []*cli.Command)
	walk = func(flags []cli.Flag, cmds []*cli.Command) {
		for _, f := range flags {
			byName[f.Names()[0]] = append(byName[f.Names()[0]], f)
		}
		for _, c := range cmds {
			walk(c.Flags, c.Subcommands)
		}
	}
	walk(app.Flags, app.Commands)
	value := func(n string) (string, bool) {
		fs := byName[n]
		if len(fs) == 0 {
			return "", false
		}
		// what --help shows, without its quotes: "2w", 60000, or
		// "16777216 with --http, no limit on stdio"
		shown := func(f cli.Flag) string {
			d := f.(cli.DocGenerationFlag).GetDefaultText()
			if u, err := strconv.Unquote(d); err == nil {
				return u
			}
			first, _, _ := strings.Cut(d, " ")
			return first
		}
		v := shown(fs[0])
		for _, f := range fs[1:] {
			if shown(f) != v {
				return "", false
			}
		}
		return v, true
	}
	same := func(doc, flag string) bool {
		doc = strings.TrimSpace(strings.ReplaceAll(doc, ",", ""))
		switch doc {
		case "off":
			doc = "false"
		case "":
			return flag == "" || flag == "false"
		}
		for unit, n := range map[string]int{" KiB": 1 << 10, " MiB": 1 << 20, " GiB": 1 << 30} {
			if k, err := strconv.Atoi(strings.TrimSuffix(doc, unit)); err == nil && strings.HasSuffix(doc, unit) {
				doc = strconv.Itoa(k * n)
			}
		}
		if d, err := time.ParseDuration(doc); err == nil {
			if f, err := time.ParseDuration(flag); err == nil {
				return d == f
			}
		}
		return doc == flag || strconv.Quote(doc) == flag
	}
	rows, prose := 0, 0
	row := regexp.MustCompile("^\\| ((?:`--[a-z-]+[^`]*`(?:, )?)+) \\| ([^|]*) \\|")
	flagIn := regexp.MustCompile("`--([a-z-]+)")
	stated := regexp.MustCompile("`--([a-z-]+)(?: [A-Z]+)?`[^.;`]{0,60}\\(default ([0-9](?:[0-9]|,[0-9])*(?: [KMG]iB)?)")
	for _, page := range docPages(t) {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(page, "../../")
		for _, line := range strings.Split(string(b), "\n") {
			m := row.FindStringSubmatch(line)
			if m == nil {
				continue
			}
			names := flagIn.FindAllStringSubmatch(m[1], -1)
			defaults := strings.Split(m[2], ", ")
			if len(defaults) != len(names) {
				defaults = []string{m[2]}
			}
			for i, n := range names {
				d := defaults[0]
				if len(defaults) == len(names) {
					d = defaults[i]
				}
				if strings.Contains(d, "`") || strings.Contains(d, "(") {
					d, _, _ = strings.Cut(d, " (")
					if strings.Contains(d, "`") {
						continue // a default named in words: a variable, a path
					}
				}
				v, ok := value(n[1])
				if !ok {
					continue
				}
				rows++
				if !same(d, v) {
					t.Errorf("%s: the table gives --%s the default %q; the flag's is %q\n\t%s", name, n[1], strings.TrimSpace(d), v, line)
				}
			}
		}
		for _, m := range stated.FindAllStringSubmatch(string(b), -1) {
			v, ok := value(m[1])
			if !ok {
				continue
			}
			prose++
			if !same(m[2], v) {
				t.Errorf("%s: says --%s defaults to %s; the flag's default is %q", name, m[1], m[2], v)
			}
		}
	}
	if rows < 5 || prose < 1 {
		t.Fatalf("found %d flag table rows and %d stated defaults: the patterns no longer match how the pages write them", rows, prose)
	}
}
