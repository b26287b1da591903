package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/testsize"
)

// readmeNotYetHeld lists the README's shell blocks that no test runs as
// pasted yet, by their first line, with the reason. Issue 15 (a script test
// runs the README as pasted) empties it. TestREADMEBlocksHeld fails when a
// block is neither held nor listed here, and when a listed block is held
// now or gone, so the list cannot drift from the README.
var readmeNotYetHeld = map[string]string{
	"token=$(readproof mcp token add agent-ts --expires 1d)   # kept in the shell, not in a file of the project": "examples/agent-ts/README.md: needs node and `npm ci` from the registry; .ci/mcp-http.sh runs agent.ts the same way (token, server, tsx) against the built binary, not as pasted",
}

// TestREADMEBlocksHeld: every bash or sh block of the README (README.md and
// the topic pages docs/README-*.md), of the examples' pages and of the skill
// the model reads (skills/readproof/SKILL.md) is run as pasted by CI (.ci/run and the .ci/*.sh scripts it runs) or contained
// verbatim in a script test (testdata/script, testdata/readme), or is
// listed in readmeNotYetHeld with its reason.
func TestREADMEBlocksHeld(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/README-*.md")
	if err != nil {
		t.Fatal(err)
	}
	var readme []byte
	examples, err := filepath.Glob("examples/*/README.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(append(pages, examples...), "skills/readproof/SKILL.md")
	for _, p := range append([]string{"README.md"}, pages...) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		readme = append(readme, b...)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	// Each file starts on a line of its own, and a block must start a
	// line: a line that only ends with the block's command (a variable
	// set before it, or `readproof exec -- go test ./...`) does not run
	// it as pasted.
	var held strings.Builder
	held.WriteString("\n")
	held.Write(ci)
	var scripts []string
	for _, pattern := range []string{"testdata/script/*.txtar", "testdata/readme/*.txtar", ".ci/*.sh"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		scripts = append(scripts, m...)
	}
	for _, p := range scripts {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		held.WriteString("\n")
		held.Write(b)
	}
	all := held.String()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("(?s)```(?:bash|sh)\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		block := m[1]
		first := strings.TrimSpace(block)
		first, _, _ = strings.Cut(first, "\n")
		seen[first] = true
		isHeld := strings.Contains(all, "\n"+block)
		if line := strings.TrimSpace(block); !isHeld && !strings.Contains(line, "\n") {
			// a one-line command CI runs as a line of its own (output redirected)
			isHeld = strings.Contains(all, "\n"+line+"\n") || strings.Contains(all, "\n"+line+" >")
		}
		_, listed := readmeNotYetHeld[first]
		switch {
		case isHeld && listed:
			t.Errorf("README block %q is held by a test now: remove it from readmeNotYetHeld", first)
		case !isHeld && !listed:
			t.Errorf("README block %q is run by no test as pasted: add a script test holding it verbatim (see readme_guard.txtar), or list it in readmeNotYetHeld with the reason", first)
		}
	}
	for first := range readmeNotYetHeld {
		if !seen[first] {
			t.Errorf("readmeNotYetHeld names %q, which is no longer a README block", first)
		}
	}
}

// TestREADMETOMLBlocksParse: every toml block of the README is a policy file
// readproof accepts as shown (the Sources section declares one resource of
// each source type), so a key renamed in the code cannot leave the README
// teaching the old one.
func TestREADMETOMLBlocksParse(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	blocks := regexp.MustCompile("(?s)```toml\n(.*?)```").FindAllStringSubmatch(string(readme), -1)
	if len(blocks) == 0 {
		t.Fatal("no toml block in README.md: the Sources section shows one")
	}
	for _, b := range blocks {
		f, err := policy.Parse(filepath.Join(t.TempDir(), "readproof.toml"), []byte(b[1]))
		if err != nil {
			t.Errorf("README toml block does not parse: %v\n%s", err, b[1])
			continue
		}
		if len(f.Resources()) == 0 {
			t.Errorf("README toml block declares no resource:\n%s", b[1])
		}
	}
}

// TestREADMEFencesHeld: every fenced block of the README is of a kind some
// test holds: bash and sh (TestREADMEBlocksHeld), console
// (TestREADMEConsoleBlocks), json (the MCP client configurations,
// readme_mcp_test.go), toml (TestREADMETOMLBlocksParse), or an unlabelled
// block of sample output. A new kind (a yaml workflow, say) needs a test
// before it goes into the README.
func TestREADMEFencesHeld(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	held := map[string]bool{"bash": true, "sh": true, "console": true, "json": true, "toml": true, "": true}
	open := false
	for i, line := range strings.Split(string(readme), "\n") {
		if !strings.HasPrefix(line, "```") {
			continue
		}
		if open {
			open = false
			continue
		}
		open = true
		if lang := strings.TrimPrefix(line, "```"); !held[lang] {
			t.Errorf("README.md:%d: a %q block, which no test runs or checks: add a test for it, or link a tested file instead", i+1, lang)
		}
	}
}

// TestREADMEInlineCommandsHeld: the commands the README's prose shows in
// inline code (`go run ...`, `go test ...`, `bench/NAME.sh`, with an
// environment prefix or not) hold as pasted as far as a test run can show
// it. A `go run` line is run verbatim by CI (.ci/run), as the blocks are.
// The others take minutes (benchmarks, full-size tests, soaks), so they are
// checked, not run: every package a `go test` line names exists and has
// tests (benchmarks for -bench), its environment variable is the one
// internal/testsize reads, and every bench script exists, is executable,
// parses (bash -n) and is described in bench/README.md.
func TestREADMEInlineCommandsHeld(t *testing.T) {
	t.Parallel()
	readme, ci, benchDoc := readFile(t, "README.md"), readFile(t, ".ci/run"), readFile(t, "bench/README.md")
	// fenced blocks are TestREADMEBlocksHeld's; an inline span may wrap once
	prose := regexp.MustCompile("(?s)```.*?```").ReplaceAllString(string(readme), "")
	commands := 0
	for _, m := range regexp.MustCompile("`([^`\n]+(?:\n[^`\n]+)?)`").FindAllStringSubmatch(prose, -1) {
		cmd := strings.Join(strings.Fields(m[1]), " ")
		words := strings.Fields(cmd)
		var env []string
		for len(words) > 1 && regexp.MustCompile(`^[A-Z_]+=\S*$`).MatchString(words[0]) {
			name, _, _ := strings.Cut(words[0], "=")
			env, words = append(env, name), words[1:]
		}
		if len(words) > 0 && words[0] == "go" {
			for _, name := range env {
				if name != testsize.Env {
					t.Errorf("README command %q sets %s, which no test reads (internal/testsize reads %s)", cmd, name, testsize.Env)
				}
			}
		}
		switch {
		case len(words) >= 2 && words[0] == "go" && words[1] == "run":
			commands++
			if !strings.Contains(string(ci), "\n"+cmd+"\n") && !strings.Contains(string(ci), "\n"+cmd+" >") {
				t.Errorf("README command %q is not run as pasted by .ci/run", cmd)
			}
		case len(words) >= 2 && words[0] == "go" && words[1] == "test":
			commands++
			bench := false
			for i := 2; i < len(words); i++ {
				w := words[i]
				switch {
				case w == "-bench":
					bench = true
					i++ // its pattern
				case w == "-run":
					i++
				case strings.HasPrefix(w, "-"):
					t.Errorf("README command %q: flag %s is not known to this test; check it and teach the test", cmd, w)
				default:
					checkTestPackage(t, cmd, w, bench)
				}
			}
		case len(words) >= 1 && strings.HasPrefix(words[0], "bench/") && strings.HasSuffix(words[0], ".sh"):
			commands++
			script := words[0]
			fi, err := os.Stat(script)
			if err != nil || fi.Mode()&0o111 == 0 {
				t.Errorf("README command %q: %s is not an executable file (%v)", cmd, script, err)
				continue
			}
			if out, err := exec.Command("bash", "-n", script).CombinedOutput(); err != nil {
				t.Errorf("README command %q: bash -n %s: %v\n%s", cmd, script, err, out)
			}
			if !strings.Contains(string(benchDoc), strings.TrimPrefix(script, "bench/")) {
				t.Errorf("README command %q: bench/README.md does not describe %s", cmd, script)
			}
		}
	}
	if commands == 0 {
		t.Fatal("found no inline command in the README: the pattern no longer matches how it writes them")
	}
}

// checkTestPackage: pkg (a ./... pattern or a package directory) holds Go
// tests, and a Benchmark function when bench.
func checkTestPackage(t *testing.T, cmd, pkg string, bench bool) {
	t.Helper()
	root := strings.TrimSuffix(strings.TrimSuffix(pkg, "..."), "/")
	if root == "." || root == "" {
		root = "."
	}
	var tests, benches int
	walk := func(dir string) {
		files, _ := filepath.Glob(filepath.Join(dir, "*_test.go"))
		for _, f := range files {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			tests += strings.Count(string(b), "\nfunc Test")
			benches += strings.Count(string(b), "\nfunc Benchmark")
		}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		t.Errorf("README command %q names %s, which is not a package directory", cmd, pkg)
		return
	}
	walk(root)
	if tests == 0 && benches == 0 && !strings.HasSuffix(pkg, "...") {
		t.Errorf("README command %q names %s, which has no tests", cmd, pkg)
	}
	if bench && benches == 0 {
		t.Errorf("README command %q benchmarks %s, which has no Benchmark function", cmd, pkg)
	}
}

// readFile is os.ReadFile, failing the test on an error.
func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestDocLinksResolve: every relative link of README.md and docs/*.md names
// a file that exists, resolved from the directory of the page that holds it
// (docs/README-*.md are read on their own, where "docs/sync.md" is
// docs/docs/sync.md), and an anchor names a heading of its page.
func TestDocLinksResolve(t *testing.T) {
	t.Parallel()
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	fence := regexp.MustCompile("(?s)```.*?```")
	link := regexp.MustCompile(`\]\(([^)\s]+)\)`)
	scheme := regexp.MustCompile(`^[a-z][a-z0-9+.-]*:`)
	anchors := map[string]map[string]bool{}
	headings := func(page string) map[string]bool {
		if a, ok := anchors[page]; ok {
			return a
		}
		a := map[string]bool{}
		notSlug := regexp.MustCompile(`[^\p{L}\p{N}_\- ]`)
		for _, line := range strings.Split(fence.ReplaceAllString(string(readFile(t, page)), ""), "\n") {
			if h, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
				a[strings.ReplaceAll(notSlug.ReplaceAllString(strings.ToLower(strings.TrimSpace(h)), ""), " ", "-")] = true
			}
		}
		anchors[page] = a
		return a
	}
	n := 0
	for _, page := range append([]string{"README.md"}, pages...) {
		for _, m := range link.FindAllStringSubmatch(fence.ReplaceAllString(string(readFile(t, page)), ""), -1) {
			target := m[1]
			if scheme.MatchString(target) {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s: link %q: %s does not exist", page, target, path)
					continue
				}
			}
			if anchor != "" && strings.HasSuffix(path, ".md") && !headings(path)[anchor] {
				t.Errorf("%s: link %q: %s has no heading #%s", page, target, path, anchor)
			}
		}
	}
	if n == 0 {
		t.Fatal("found no relative link: the pattern no longer matches how the pages write them")
	}
}

// cliDocNotYetHeld lists docs/cli.md's commands that no script runs as
// written, with the reason (TestCLIDocCommandsHeld).
func cliDocNotYetHeld() map[string]string {
	return map[string]string{
		`readproof completion zsh > "${fpath[1]}/_readproof"`:                                      "zsh syntax, and zsh is not a test dependency; completion.txtar runs `readproof completion zsh` and checks the script",
		`go build -ldflags "-X github.com/readproof/readproof/internal/buildinfo.version=v1.2.3 \`: "builds the module (tens of seconds); TestVersionFromClone (READPROOF_LONG_TESTS=1) builds with -ldflags -X and checks version --json",
	}
}

// TestCLIDocCommandsHeld: docs/cli.md shows its examples as indented blocks,
// which TestREADMEBlocksHeld does not see. Every command in them (a "$ "
// line of a console example with the lines shown under it, or a command
// line) is contained verbatim in a script test or .ci, or listed in
// cliDocNotYetHeld with its reason.
func TestCLIDocCommandsHeld(t *testing.T) {
	t.Parallel()
	var held strings.Builder
	held.Write(readFile(t, ".ci/run"))
	for _, pattern := range []string{"testdata/script/*.txtar", "testdata/readme/*.txtar", ".ci/*.sh"} {
		m, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range m {
			held.WriteString("\n")
			held.Write(readFile(t, p))
		}
	}
	all := held.String()
	var blocks [][]string
	var cur []string
	prevBlank := true
	for _, line := range strings.Split(string(readFile(t, "docs/cli.md")), "\n") {
		if strings.HasPrefix(line, "    ") && (cur != nil || prevBlank) {
			cur = append(cur, line[4:])
		} else if cur != nil {
			blocks, cur = append(blocks, cur), nil
		}
		prevBlank = strings.TrimSpace(line) == ""
	}
	if cur != nil {
		blocks = append(blocks, cur)
	}
	notYet := cliDocNotYetHeld()
	seen := map[string]bool{}
	commands := 0
	for _, b := range blocks {
		if strings.HasPrefix(b[0], "{") { // sample output
			continue
		}
		var want []string // each command with its continuation lines, or a console step's output line
		for i := 0; i < len(b); i++ {
			line := b[i]
			if cmd, ok := strings.CutPrefix(line, "$ "); ok {
				want = append(want, cmd)
				continue
			}
			if strings.HasPrefix(b[0], "$ ") { // a console example's output
				want = append(want, line)
				continue
			}
			cmd := line
			for strings.HasSuffix(line, `\`) && i+1 < len(b) {
				i++
				line = b[i]
				cmd += "\n" + line
			}
			want = append(want, cmd)
		}
		for _, w := range want {
			commands++
			first, _, _ := strings.Cut(w, "\n")
			seen[first] = true
			_, listed := notYet[first]
			isHeld := strings.Contains(all, w)
			switch {
			case isHeld && listed:
				t.Errorf("docs/cli.md: %q is held by a test now: remove it from cliDocNotYetHeld", first)
			case !isHeld && !listed:
				t.Errorf("docs/cli.md: %q is in no script test as written: add it to one (see cli_doc.txtar), or list it in cliDocNotYetHeld with the reason", first)
			}
		}
	}
	if commands < 5 {
		t.Fatalf("found %d commands in docs/cli.md's indented blocks: the pattern no longer matches how it writes them", commands)
	}
	for first := range notYet {
		if !seen[first] {
			t.Errorf("cliDocNotYetHeld names %q, which docs/cli.md no longer shows", first)
		}
	}
}
