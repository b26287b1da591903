package commands

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"
)

// TestPreCommitEntryIsYAML (session 25): the entry hooks install tells a
// pre-commit user to add reads back, through a YAML parser, as the sh
// command line that runs readproof, whatever the paths in it hold: written
// plain, " #" in a path began a comment and ": " broke the mapping. And sh
// runs what it reads as the command given.
func TestPreCommitEntryIsYAML(t *testing.T) {
	for _, command := range []string{
		"readproof verify && readproof status --exit-code",
		"readproof --config '/work/a #b/readproof.toml' verify && readproof --config '/work/a #b/readproof.toml' status --exit-code",
		"readproof --store '/srv/x: y/store' verify",
		`readproof --store '/srv/it'\''s "here" \ and	tab/store' verify`,
		"readproof --store '/srv/café/store' verify",
	} {
		entry := preCommitEntry(command)
		doc := "repos:\n  - repo: local\n    hooks:\n      - id: readproof\n        entry: " + entry + "\n        language: system\n"
		var got struct {
			Repos []struct {
				Hooks []struct {
					Entry, Language string
				}
			}
		}
		if err := yaml.Unmarshal([]byte(doc), &got); err != nil {
			t.Fatalf("%s\ndoes not parse: %v", doc, err)
		}
		if len(got.Repos) != 1 || len(got.Repos[0].Hooks) != 1 || got.Repos[0].Hooks[0].Language != "system" {
			t.Fatalf("%s\nparsed as %+v", doc, got)
		}
		e := got.Repos[0].Hooks[0].Entry
		inner, ok := strings.CutPrefix(e, "sh -c ")
		if !ok {
			t.Fatalf("entry %q: not sh -c", e)
		}
		if _, err := exec.LookPath("sh"); err != nil {
			continue
		}
		// what sh reads as the -c argument is the command itself
		out, err := exec.Command("sh", "-c", "printf %s "+inner).Output()
		if err != nil || string(out) != command {
			t.Errorf("entry %q: sh reads %q (%v), want %q", e, out, err, command)
		}
	}
}

// TestPreCommitEntryInDocs: docs/README-ci.md shows the entry the hint
// gives for a project with the default policy file and store, as the hint
// writes it.
func TestPreCommitEntryInDocs(t *testing.T) {
	doc, err := os.ReadFile("../../docs/README-ci.md")
	if err != nil {
		t.Fatal(err)
	}
	want := "`entry: " + preCommitEntry("readproof verify && readproof status --exit-code") + "`"
	if !strings.Contains(strings.Join(strings.Fields(string(doc)), " "), want) {
		t.Errorf("docs/README-ci.md does not show the pre-commit entry as the hint writes it: %s", want)
	}
}
