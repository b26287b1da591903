package commands

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// TestREADMECommandsTable: every command and subcommand `readproof --help`
// and `readproof help COMMAND` list is named in the first column of the
// README's "## Commands" table, the newcomer's map of the tool (`run start
// ID`, `remote add|list|rm`). Before session 23 the table left out, among
// others, `tag promote` and `tag propose`, `remote init`, `hooks uninstall`
// and `migrate`, which later sections use.
func TestREADMECommandsTable(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(b), "\n## Commands\n")
	if !ok {
		t.Fatal("README.md has no \"## Commands\" section")
	}
	table, _, _ = strings.Cut(table, "\n## ")
	named := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		first, _, ok := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		if !ok || !strings.HasPrefix(line, "| `") {
			continue
		}
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(strings.ReplaceAll(first, `\|`, "|"), -1) {
			words := strings.Fields(m[1])
			if len(words) == 0 {
				continue
			}
			named[words[0]] = true
			// the words after a command that are its subcommands:
			// `probe key init`, `remote add|list|rm`, `key init`
			for i := 1; i < len(words); i++ {
				if strings.HasPrefix(words[i], "-") || strings.ToUpper(words[i]) == words[i] {
					break
				}
				for _, alt := range strings.Split(words[i], "|") {
					named[strings.Join(words[:i], " ")+" "+alt] = true
				}
			}
		}
	}
	var walk func(prefix string, cmds []*cli.Command)
	missing := 0
	walk = func(prefix string, cmds []*cli.Command) {
		for _, c := range cmds {
			if c.Hidden || c.Name == "help" && prefix != "" {
				continue
			}
			name := strings.TrimSpace(prefix + " " + c.Name)
			if !named[name] {
				missing++
				t.Errorf("README.md's Commands table does not name `%s`", name)
			}
			walk(name, c.Subcommands)
		}
	}
	walk("", commandList())
	if missing == 0 && len(named) < 20 {
		t.Fatalf("read only %d names from the table: the pattern no longer matches how it writes them", len(named))
	}
}
