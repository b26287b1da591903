package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/policy"
)

// readmeNotYetHeld lists the README's shell blocks that no test runs as
// pasted yet, by their first line, with the reason. Issue 15 (a script test
// runs the README as pasted) empties it. TestREADMEBlocksHeld fails when a
// block is neither held nor listed here, and when a listed block is held
// now or gone, so the list cannot drift from the README.
var readmeNotYetHeld = map[string]string{}

// TestREADMEBlocksHeld: every bash or sh block of the README is run as
// pasted by CI (.ci/run and the .ci/*.sh scripts it runs) or contained
// verbatim in a script test (testdata/script, testdata/readme), or is
// listed in readmeNotYetHeld with its reason.
func TestREADMEBlocksHeld(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	ci, err := os.ReadFile(".ci/run")
	if err != nil {
		t.Fatal(err)
	}
	var held strings.Builder
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
		held.Write(b)
	}
	all := held.String()
	seen := map[string]bool{}
	for _, m := range regexp.MustCompile("(?s)```(?:bash|sh)\n(.*?)```").FindAllStringSubmatch(string(readme), -1) {
		block := m[1]
		first := strings.TrimSpace(block)
		first, _, _ = strings.Cut(first, "\n")
		seen[first] = true
		isHeld := strings.Contains(all, block)
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
		if len(f.Resources) == 0 {
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
