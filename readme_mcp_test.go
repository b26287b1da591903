package main

import (
	"bytes"
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/commands"
)

// mcpServerConfig is one server of an MCP client's configuration (Claude
// Code's .mcp.json, Claude Desktop's and Cursor's mcp.json).
type mcpServerConfig struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
	URL     string            `json:"url"`
	Headers map[string]string `json:"headers"`
}

// TestREADMEMCPConfigs: every JSON configuration in the README's MCP section
// parses as a client configuration whose readproof server is one we
// implement: a stdio command line that parses as `readproof mcp ...` (each
// flag one of ours), or an HTTP server on a loopback URL with an
// Authorization: Bearer header taken from the environment, directly or
// through the pinned mcp-remote bridge. Together with readme_mcp.txtar (the
// shell blocks) it holds the whole set-up section.
func TestREADMEMCPConfigs(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(readme)
	start := strings.Index(section, "\n## MCP server")
	if start < 0 {
		t.Fatal("no MCP server section in README.md")
	}
	section = section[start+1:]
	if end := strings.Index(section, "\n## "); end >= 0 {
		section = section[:end]
	}
	loopback := regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/$`)
	fromEnv := regexp.MustCompile(`^Bearer \$\{(env:)?[A-Z_]+\}$`)
	kinds := map[string]int{}
	for _, m := range regexp.MustCompile("(?s)```json\n(.*?)```").FindAllStringSubmatch(section, -1) {
		var cfg struct {
			MCPServers map[string]mcpServerConfig `json:"mcpServers"`
		}
		dec := json.NewDecoder(strings.NewReader(m[1]))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&cfg); err != nil {
			t.Errorf("README JSON block does not parse as an MCP client configuration: %v\n%s", err, m[1])
			continue
		}
		s, ok := cfg.MCPServers["readproof"]
		if !ok || len(cfg.MCPServers) != 1 {
			t.Errorf("README JSON block: want one server named readproof:\n%s", m[1])
			continue
		}
		switch {
		case strings.HasSuffix(s.Command, "/readproof"):
			kinds["stdio"]++
			if len(s.Args) == 0 || s.Args[0] != "mcp" {
				t.Errorf("stdio config: args %q do not start with mcp", s.Args)
			}
			var out, errb bytes.Buffer
			if code := commands.Main(append(append([]string{"readproof"}, s.Args...), "--help"), strings.NewReader(""), &out, &errb); code != 0 {
				t.Errorf("stdio config: readproof %s does not parse (exit %d): %s", strings.Join(s.Args, " "), code, errb.String())
			}
			for k := range s.Env {
				if !strings.HasPrefix(k, "READPROOF_") {
					t.Errorf("stdio config: env %s is not one of readproof's", k)
				}
			}
		case s.Command == "npx":
			kinds["mcp-remote"]++
			if len(s.Args) != 5 || s.Args[0] != "-y" || !regexp.MustCompile(`^mcp-remote@[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(s.Args[1]) ||
				!loopback.MatchString(s.Args[2]) || s.Args[3] != "--header" {
				t.Errorf("mcp-remote config: args %q: want -y mcp-remote@VERSION URL --header Authorization:${VAR}", s.Args)
				continue
			}
			v, ok := strings.CutPrefix(s.Args[4], "Authorization:${")
			v, ok2 := strings.CutSuffix(v, "}")
			if !ok || !ok2 || !strings.HasPrefix(s.Env[v], "Bearer rpmcp_") {
				t.Errorf("mcp-remote config: the header must come from an env entry holding Bearer rpmcp_...: %q %q", s.Args[4], s.Env)
			}
		case s.URL != "":
			kinds["http"]++
			if s.Type != "" && s.Type != "http" {
				t.Errorf("http config: type %q, want http (streamable HTTP)", s.Type)
			}
			if !loopback.MatchString(s.URL) {
				t.Errorf("http config: url %q is not the loopback address mcp --http serves by default", s.URL)
			}
			if !fromEnv.MatchString(s.Headers["Authorization"]) || len(s.Headers) != 1 {
				t.Errorf("http config: headers %q: want only Authorization: Bearer ${VAR}, the token from the environment", s.Headers)
			}
		default:
			t.Errorf("README JSON block: neither readproof, mcp-remote nor an HTTP URL:\n%s", m[1])
		}
	}
	// Claude Code's .mcp.json, Claude Desktop and Cursor over stdio; Claude
	// Code's .mcp.json and Cursor over HTTP; Claude Desktop through mcp-remote.
	if kinds["stdio"] != 3 || kinds["http"] != 2 || kinds["mcp-remote"] != 1 {
		t.Errorf("README MCP configurations: %v, want 3 stdio, 2 http, 1 mcp-remote", kinds)
	}
}

// tokenFileLeft lists the pages that still show an MCP token written to a
// file in the working directory (the project, a git work tree, where `git
// add -A` commits it), with the reason they are left. TestDocsKeepMCPTokensOutOfTheProject
// fails when a page does so and is not listed, and when a listed page no
// longer does.
var tokenFileLeft = map[string]string{}

// TestDocsKeepMCPTokensOutOfTheProject: an example that prints a token with
// `readproof mcp token add` keeps it in a shell variable or a file outside
// the project ($HOME, $XDG_RUNTIME_DIR, an absolute path), as the token file
// itself is kept: a relative file name puts a live bearer token in the
// project's work tree, untracked and not ignored.
func TestDocsKeepMCPTokensOutOfTheProject(t *testing.T) {
	t.Parallel()
	relative := regexp.MustCompile(`readproof mcp token add [^>#]*>\s*([^\s/$~"'][^\s]*)`)
	for _, page := range []string{"README.md", "docs/README-mcp.md", "examples/agent-ts/README.md"} {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		m := relative.FindSubmatch(b)
		_, left := tokenFileLeft[page]
		switch {
		case m != nil && !left:
			t.Errorf("%s writes an MCP token to %s, a file in the working directory (the project): keep it in a shell variable, token=$(readproof mcp token add ...), or a file outside the project", page, m[1])
		case m == nil && left:
			t.Errorf("%s no longer writes a token into the project: remove it from tokenFileLeft", page)
		}
	}
}
