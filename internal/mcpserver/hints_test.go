package mcpserver

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestForModel (issue 15): hints that name CLI commands reach a model as
// the tool to call, or as a command the operator must run.
func TestForModel(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"start it first: readproof run start r1":   "start it first: the tool readproof_run_start (r1)",
		"commit it first: readproof run commit r1": "commit it first: the tool readproof_run_commit (r1)",
		"check the URI's spelling (`readproof resource list`), or register it: readproof resource add readproof://d/x --source-type filesystem --path FILE": "check the URI's spelling (the tool readproof_resources_list), or register it: `readproof resource add readproof://d/x --source-type filesystem --path FILE` (an operator's command: no tool does this)",
		"run `readproof init` first, or point --store / READPROOF_STORE at an existing store":                                                               "run `readproof init` (an operator's command: no tool does this) first, or point --store / READPROOF_STORE at an existing store",
		"restore it from a clone (readproof pull) or a backup":                                                                                              "restore it from a clone (`readproof pull` (an operator's command: no tool does this)) or a backup",
		"list the tags with: readproof tag list readproof://demo/a":                                                                                         "list the tags with: the tool readproof_tag_list (readproof://demo/a)",
		"`readproof run list` shows the open runs":                                                                                                          "`readproof run list` (an operator's command: no tool does this) shows the open runs",
		"read readproof://demo/a from readproof.toml with readproof_resolve":                                                                                "read readproof://demo/a from readproof.toml with readproof_resolve",
		"the readproof store at .readproof":                                                                                                                 "the readproof store at .readproof",
	}
	for in, want := range cases {
		if got := forModel(in); got != want {
			t.Errorf("forModel(%q)\n got %q\nwant %q", in, got, want)
		}
	}
	// Every tool named in the table exists.
	tools := map[string]bool{}
	for _, name := range []string{ToolResourcesList, ToolResolve, ToolHistory, ToolRunStart, ToolRunMount, ToolRunCommit, ToolManifest,
		ToolDiff, ToolReplay, ToolTagSet, ToolTagList, ToolTagDelete, ToolEvidenceExport, ToolProbeCheck, ToolReceiptsVerifyClms} {
		tools[name] = true
	}
	for _, c := range cliTools {
		if !tools[c.tool] {
			t.Errorf("%s maps to %s, which is not a tool", c.cmd, c.tool)
		}
	}
}

// TestNoCLIInstructionsForModel: the texts this package writes for a model
// name a readproof command only where they also say a tool cannot do it,
// or where they compare a tool with the command ("as `readproof get`
// does"); issue 15 found "readproof receipts keygen", which does not exist.
func TestNoCLIInstructionsForModel(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	quoted := regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "hints.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, lit := range quoted.FindAllString(string(src), -1) {
			if lit == `"readproof resource (optionally @tag)"` { // the resource template's title
				continue
			}
			if !cliCommand().MatchString(lit) || strings.Contains(lit, "keygen") {
				if strings.Contains(lit, "keygen") {
					t.Errorf("%s: %s names a command that does not exist", f, lit)
				}
				continue
			}
			ok := strings.Contains(lit, "no tool does this") || strings.Contains(lit, "the operator") ||
				regexp.MustCompile("as `?readproof [a-z ]+`?( --json)? (does|prints|writes)").MatchString(lit) ||
				strings.Contains(lit, "readproof mcp token") // readOnlyRefusal: rewritten by forModel in toolError
			if !ok {
				t.Errorf("%s: %s tells a model to run a CLI command; name the tool, or say the operator must run it", f, lit)
			}
		}
	}
}
