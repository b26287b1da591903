package commands

import (
	"bytes"
	"strings"
	"testing"
)

// TestCommandGroupsNames: the name beside each constructor in
// commandGroups is the name of the command it builds, once, with no
// aliases (soleCommand finds a command by that name without building it).
func TestCommandGroupsNames(t *testing.T) {
	seen := map[string]bool{}
	for _, g := range commandGroups() {
		for _, nc := range g.commands {
			c := nc.make()
			if c.Name != nc.name {
				t.Errorf("commandGroups lists %q for the command named %q", nc.name, c.Name)
			}
			if len(c.Aliases) > 0 {
				t.Errorf("command %q has aliases %q: soleCommand would not find it by them", c.Name, c.Aliases)
			}
			if seen[nc.name] {
				t.Errorf("command %q listed twice", nc.name)
			}
			seen[nc.name] = true
		}
	}
}

// TestSoleCommand: which arguments build one command and which the whole
// tree.
func TestSoleCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // the command built alone; "" for the whole tree
	}{
		{[]string{"readproof"}, ""},
		{[]string{"readproof", "--help"}, ""},
		{[]string{"readproof", "-h"}, ""},
		{[]string{"readproof", "help", "get"}, ""},
		{[]string{"readproof", "man"}, ""},
		{[]string{"readproof", "completion", "bash"}, ""},
		{[]string{"readproof", "demo"}, ""},
		{[]string{"readproof", "nosuch", "x"}, ""},
		{[]string{"readproof", "--verbose", "get", "u"}, ""},
		{[]string{"readproof", "--store"}, ""},
		{[]string{"readproof", "get", "readproof://a/b"}, "get"},
		{[]string{"readproof", "get", "--help"}, "get"},
		{[]string{"readproof", "version"}, "version"},
		{[]string{"readproof", "--json", "--store", "s", "--config=c", "run", "--id", "x", "u"}, "run"},
		{[]string{"readproof", "--store=s", "-config", "c", "tag", "set", "x"}, "tag"},
	} {
		cs := soleCommand(tc.args)
		got := ""
		if cs != nil {
			got = cs[0].Name
			if len(cs) != 2 || cs[1].Name != "help" {
				t.Errorf("soleCommand(%q) built %d commands, want %q and help", tc.args, len(cs), got)
			}
		}
		if got != tc.want {
			t.Errorf("soleCommand(%q) built %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestSoleCommandSameAnswers: a command built alone answers --help, a bare
// call (usage errors included), an unknown flag and an unknown subcommand
// as it does in the whole tree, byte for byte and with the same exit code.
func TestSoleCommandSameAnswers(t *testing.T) {
	t.Chdir(t.TempDir())
	t.Setenv("HOME", t.TempDir())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
	// these act without arguments (serve, read stdin, run the demo, create
	// a store, start a process): not called bare
	acts := map[string]bool{"mcp": true, "demo": true, "probe": true, "hook": true, "init": true, "exec": true, "gc": true, "remote": true}
	for _, g := range commandGroups() {
		for _, nc := range g.commands {
			calls := [][]string{{nc.name, "--help"}, {nc.name, "--no-such-flag"}, {nc.name, "--version"}, {"--json", nc.name, "--help"}}
			if !acts[nc.name] {
				calls = append(calls, []string{nc.name}, []string{nc.name, "no-such-word", "x"})
			}
			for _, call := range calls {
				args := append([]string{"readproof"}, call...)
				var out, errb, wout, werrb bytes.Buffer
				code := mainApp(args, strings.NewReader(""), &out, &errb, true)
				wcode := mainApp(args, strings.NewReader(""), &wout, &werrb, false)
				if code != wcode || out.String() != wout.String() || errb.String() != werrb.String() {
					t.Errorf("readproof %s: alone exit %d\n%s%s\nin the whole tree exit %d\n%s%s", strings.Join(call, " "), code, out.String(), errb.String(), wcode, wout.String(), werrb.String())
				}
			}
		}
	}
}
