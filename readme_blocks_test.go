package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
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
