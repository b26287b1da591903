package commands

import (
	"bytes"
	"regexp"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"
)

// leafCommands is every command path that runs an action ("resource add").
func leafCommands(prefix string, cs []*cli.Command) []string {
	var out []string
	for _, c := range cs {
		p := strings.TrimSpace(prefix + " " + c.Name)
		if len(c.Subcommands) > 0 {
			out = append(out, leafCommands(p, c.Subcommands)...)
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestUsageNamesTheWholeCommand: for every command, the USAGE line of
// --help and the "usage:" hint of a call without its arguments name the
// command as typed, parents included (issue 15: the bare `resource add`
// usage said `readproof add`).
func TestUsageNamesTheWholeCommand(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// these act without arguments (serve, read stdin, run the demo, create
	// a store, start a process): only their --help is read
	acts := map[string]bool{"mcp": true, "demo": true, "probe serve": true, "hook pre-receive": true, "init": true, "exec": true, "gc": true, "remote init": true}
	usage := regexp.MustCompile(`usage: readproof ([^\n]*)`)
	leaves := leafCommands("", commandList())
	if len(leaves) < 20 {
		t.Fatalf("found %d commands: %q", len(leaves), leaves)
	}
	for _, path := range leaves {
		words := strings.Fields(path)
		var out, errb bytes.Buffer
		Main(append(append([]string{"readproof"}, words...), "--help"), strings.NewReader(""), &out, &errb)
		if !strings.Contains(out.String(), "USAGE:\n   readproof "+path+" ") {
			t.Errorf("readproof %s --help: the USAGE line does not start with `readproof %s`:\n%s%s", path, path, out.String(), errb.String())
		}
		if acts[path] {
			continue
		}
		out.Reset()
		errb.Reset()
		Main(append([]string{"readproof"}, words...), strings.NewReader(""), &out, &errb)
		for _, m := range usage.FindAllStringSubmatch(errb.String(), -1) {
			if !strings.HasPrefix(m[1], path+" ") && m[1] != path {
				t.Errorf("readproof %s: the usage hint names %q, not the command as typed", path, "readproof "+m[1])
			}
		}
	}
}
