package mcpserver

// What a client over HTTP reads of the server's file system. Over stdio the
// client is the operator's own agent, on the operator's machine, and an
// error names the paths the CLI would name. Over HTTP the client is
// whoever holds a token: the absolute paths in an error (the store's, the
// policy file's, a lock file's, a key file's) would tell it the server's
// layout and its user's name, and it can do nothing with them. So every
// text the server writes for an HTTP client (a tool error, its hint, a
// source's warning, a receipt error, a JSON-RPC error) passes through
// serverPaths.hide, and the server's log (--verbose) keeps the full text.

import (
	"cmp"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverPaths are the directories an HTTP client reads under a name of
// their own, longest first (a store inside the home is the store).
type serverPaths []namedPath

type namedPath struct{ path, name string }

// newServerPaths names the store directory <store>, the policy file
// <policy> and the home directory ~, each also as its symbolic links
// resolve (an error may name either).
func newServerPaths(storeDir, policyFile string) serverPaths {
	home, _ := os.UserHomeDir()
	var ps serverPaths
	add := func(p, name string) {
		if p == "" || !filepath.IsAbs(p) {
			return
		}
		for _, q := range []string{filepath.Clean(p), resolved(p)} {
			if q != "" && q != string(filepath.Separator) && !slices.ContainsFunc(ps, func(n namedPath) bool { return n.path == q }) {
				ps = append(ps, namedPath{q, name})
			}
		}
	}
	add(policyFile, "<policy>")
	add(storeDir, "<store>")
	add(home, "~")
	slices.SortStableFunc(ps, func(a, b namedPath) int { return cmp.Compare(len(b.path), len(a.path)) })
	return ps
}

func resolved(p string) string {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return ""
	}
	return r
}

// hide is s with the server's paths replaced: the store directory by
// <store>, the policy file by <policy>, the home directory by ~ (what is
// below them stays: <store>/refs/heads/x.lock is the store's own name of a
// file), and any other absolute path by its base name.
func (ps serverPaths) hide(s string) string {
	if !strings.Contains(s, "/") {
		return s
	}
	for _, p := range ps {
		s = replacePath(s, p.path, p.name)
	}
	return otherPath().ReplaceAllStringFunc(s, func(m string) string {
		lead := ""
		if m[0] != '/' {
			lead, m = m[:1], m[1:]
		}
		// a sentence's full stop, not the name's
		path := strings.TrimRight(m, ".")
		base := filepath.Base(path)
		if base == "/" || base == "." || base == ".." {
			return lead + m
		}
		return lead + base + m[len(path):]
	})
}

// otherPath matches an absolute path that starts a word (at the start, or
// after a space, a quote, a parenthesis, a bracket, '=', ',' or ';'), up to a
// character that ends it in a message (a space, a quote, a colon, a
// parenthesis, a bracket, a comma or a semicolon). A URL's "//host/path"
// does not start a word, and "<store>/x" and "~/x" are not absolute.
var otherPath = sync.OnceValue(func() *regexp.Regexp {
	const end = "\\s\"'`:;,()\\[\\]"
	return regexp.MustCompile("(?:^|[\\s\"'(\\[=,;`])/[^/" + end + "][^" + end + "]*")
})

// replacePath replaces each occurrence of the directory or file p in s that
// is a whole path (not a part of a longer name: /a/store2 is not /a/store)
// by name.
func replacePath(s, p, name string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, p)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(p)
		whole := (i == 0 || !pathByte(s[i-1])) && !continues(s[end:])
		if whole {
			b.WriteString(s[:i] + name)
		} else {
			b.WriteString(s[:end])
		}
		s = s[end:]
	}
}

// continues reports whether rest, what follows a path in a text, makes it
// a longer name: a byte of a name, but not a '/' (a file below it) nor
// the full stop that ends a sentence.
func continues(rest string) bool {
	if rest == "" || rest[0] == '/' {
		return false
	}
	dots := len(rest) - len(strings.TrimLeft(rest, "."))
	if dots > 0 {
		return dots < len(rest) && pathByte(rest[dots])
	}
	return pathByte(rest[0])
}

// pathByte reports whether c may continue a file name.
func pathByte(c byte) bool {
	return c == '/' || c == '.' || c == '_' || c == '-' || c == '~' ||
		'0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
}

// remote reports whether a request came over HTTP: only the HTTP front
// end verifies a bearer token, so only its requests carry one.
func remote(req mcp.Request) bool {
	if req == nil {
		return false
	}
	extra := req.GetExtra()
	return extra != nil && extra.TokenInfo != nil
}

// forClient is how the server words text for the client of req: as it is
// over stdio, with the server's paths hidden over HTTP.
func (s *Server) forClient(req mcp.Request) func(string) string {
	if !remote(req) {
		return func(t string) string { return t }
	}
	return s.paths.hide
}
