package mcpserver

import (
	"regexp"
	"strings"
	"sync"
)

// Hints and messages come from the store, written for a person at a shell:
// "start it first: readproof run start r1". A model talking MCP cannot run
// a command (issue 15), so before an error reaches it forModel names the
// tool that does the same, or says that the operator must run the command.

// cliTools maps a readproof command (its words after "readproof") to the
// tool of this server that does the same.
var cliTools = [...]struct{ cmd, tool string }{
	{"run start", ToolRunStart},
	{"run mount", ToolRunMount},
	{"run commit", ToolRunCommit},
	{"resource list", ToolResourcesList},
	{"tag set", ToolTagSet},
	{"tag list", ToolTagList},
	{"tag rm", ToolTagDelete},
	{"history", ToolHistory},
	{"get", ToolResolve},
	{"manifest", ToolManifest},
	{"diff", ToolDiff},
	{"replay", ToolReplay},
	{"evidence export", ToolEvidenceExport},
	{"probe check", ToolProbeCheck},
	{"receipts verify-claims", ToolReceiptsVerifyClms},
}

// cliCommand matches "readproof COMMAND ARGS..." for readproof's top-level
// commands (not readproof:// URIs, readproof.toml or tool names), optionally
// in backquotes; the arguments end at a backquote, a closing parenthesis,
// a comma or semicolon, or the end of the text.
var cliCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("`?readproof ((?:init|resource|get|run|tag|exec|inspect|history|status|manifest|diff|remote|push|pull|clone|conflicts|replay|verify|evidence|verify-commit|key|probe|receipts|mcp|gc|migrate|hooks)\\b[^`),;\\n]*)`?")
})

// shellCommand matches the shell commands the store's hints give a person
// at the server's shell: rm, chmod (an octal or a symbolic mode: the
// ssh configuration's "chmod go-w FILE") and ls -ld of the paths that follow
// (absolute, or quoted as text.ShellArg quotes), and git fsck; optionally
// in backquotes.
var shellCommand = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile("`?(\\b(?:rm(?: -f)?|chmod (?:[0-7]{3,4}|[ugoa]*[-+=][rwxXst]+)|ls -ld)(?: (?:'[^']*'|/[^\\s`),;']*))+|\\bgit fsck(?: --strict)?\\b)`?")
})

// forModel rewrites the readproof commands in s for a model: a command
// this server has a tool for becomes "the tool TOOL (ARGS)", any other
// "`readproof ...` (an operator's command: no tool does this)", which
// reads right wherever the command stood ("create one with ...",
// "register it: ..."). A shell command (shellCommand) is marked the
// operator's the same way: a model with a shell of its own (Claude Code's)
// would otherwise take "remove it now: rm .../x.lock" as its to run, on a
// lock a live writer may hold; and "run the command again" is "call the
// tool again".
func forModel(s string) string {
	s = strings.ReplaceAll(s, "run the command again", "call the tool again")
	s = shellCommand().ReplaceAllStringFunc(s, func(m string) string {
		return "`" + strings.Trim(m, "`") + "` (an operator's command: no tool does this)"
	})
	return cliCommand().ReplaceAllStringFunc(s, func(m string) string {
		line := strings.TrimSpace(strings.Trim(m, "`"))
		trail := ""
		if strings.HasSuffix(m, " ") {
			trail = " "
		}
		words := strings.TrimPrefix(line, "readproof ")
		for _, t := range cliTools {
			if args, ok := strings.CutPrefix(words, t.cmd); ok && (args == "" || args[0] == ' ') {
				if args = strings.TrimSpace(args); args != "" {
					return "the tool " + t.tool + " (" + args + ")" + trail
				}
				return "the tool " + t.tool + trail
			}
		}
		return "`" + line + "` (an operator's command: no tool does this)" + trail
	})
}
