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
var readmeNotYetHeld = map[string]string{
	"git --git-dir .readproof log --oneline main                 # one journal commit per run, with its manifest": "inspection commands on an existing store; issue 15",
	"readproof remote add origin git@example.com:team/readproof-runs.git":                                         "needs a hosted ssh remote",
	"readproof conflicts list": "needs a conflicted store; team.txtar runs the same verbs on its own data",
	"# push everything shared (open runs under refs/heads/readproof/open/ stay local)":                                    "plain-git sharing against origin; gitinterop.txtar runs the refspecs on its own remote",
	"readproof evidence export run-a --with-content --out bundle.json   # by run id or manifest id; stdout without --out": "issue 15",
	"readproof probe key init                      # once: a 0600 key file outside every repository":                      "issue 15; probe.txtar runs the same verbs",
	"readproof receipts key init          # 32 random bytes, mode 0600, at $XDG_CONFIG_HOME/readproof/receipts.key":       "issue 15; receipts_key.txtar runs it",
	"readproof exec --session agent-7 -- go test ./...":                                                                   "runs a Go test suite; receipts_exec.txtar runs exec on other commands",
	"# the store, cloned or pulled from where the agent's orchestrator pushed it":                                         "issue 15; receipts_claims.txtar runs verify-claims",
	"readproof verify              # the whole store: exit 0 healthy, 3 broken, 4 could not check":                        "issue 15; verify.txtar runs it",
	"readproof hooks install     # in the project repository (or --repo DIR)":                                             "issue 15; hooks.txtar runs it",
	"readproof gc                # pack with stock git; remove unreachable objects older than 2 weeks":                    "issue 15; gc.txtar runs it",
	"claude mcp add readproof -- /abs/path/to/readproof mcp --config /abs/path/to/project/readproof.toml":                 "needs the Claude Code CLI",
}

// TestREADMEBlocksHeld: every bash or sh block of the README is run as
// pasted by CI (.ci/run) or contained verbatim in a script test, or is
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
	scripts, err := filepath.Glob("testdata/script/*.txtar")
	if err != nil {
		t.Fatal(err)
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
