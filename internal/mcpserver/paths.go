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
	"errors"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/text"
)

// serverPaths are the directories an HTTP client reads under a name of
// their own, longest first (a store inside the home is the store).
type serverPaths []namedPath

// namedPath is a path the server knows and the name it is read as; a
// root (name "") is a directory the policy's sources read below (the
// policy's directory, its roots): a path below it is its base name, as
// any other path of the machine, found whole although the root's own
// path holds a space (/srv/Team Share/docs/a.md reads a.md, not
// "Team Share/docs/a.md").
type namedPath struct{ path, name string }

// newServerPaths names the store directory <store>, the policy file
// <policy> and the home directory ~, each also as its symbolic links
// resolve (an error may name either), and the policy's directory and
// roots (read once, at start) as roots.
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
	if policyFile != "" {
		add(filepath.Dir(policyFile), "")
		if f, err := policy.Load(policyFile); err == nil {
			for _, r := range f.Roots {
				add(r, "")
			}
		}
	}
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
// file), and any other absolute path of this machine by its base name
// (onThisMachine). A path of this machine is a Unix path (/srv/docs/a.md),
// a Windows one (C:\Users\a\b.md, \\host\share\b.md) or a file URL
// of this host (file:///srv/docs/a.md, which reads as its path would)
// whose first directory exists here; a word that only looks like one
// stays ("404 for /api/v1/docs", unless this machine has a /api). A
// relative path that climbs out (../alice-notes/notes.md) is its last name.
func (ps serverPaths) hide(s string) string { return ps.hideOn(s, onThisMachine) }

// hideOn is hide with local saying whether a path's first directory
// (/srv, C:\Users, \\host\share) is one of this machine's.
func (ps serverPaths) hideOn(s string, local func(top string) bool) string {
	if !strings.ContainsAny(s, `/\`) {
		return s
	}
	for _, p := range ps {
		if p.name == "" {
			s = hideBelow(s, p.path)
			continue
		}
		s = replacePath(s, p.path, p.name)
	}
	var b strings.Builder
	last := 0
	local = lookingUpTo(maxLooks, local)
	for _, m := range otherPath().FindAllStringSubmatchIndex(s, -1) {
		i, j := m[2], m[3]
		b.WriteString(s[last:i])
		b.WriteString(ps.hideOne(s[i:j], local))
		last = j
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// maxLooks bounds the first directories one text has looked up on the
// machine (onThisMachine, a stat each): a text that names more, such as a
// caller's value of 100,000 words " /aN" quoted in an error, has the paths
// of the others hidden without a look, as if the machine had them.
const maxLooks = 32

// lookingUpTo is local answering each first directory once, and at most
// max different ones: after those, every other is taken as the machine's.
func lookingUpTo(max int, local func(string) bool) func(string) bool {
	var seen map[string]bool
	return func(top string) bool {
		if v, ok := seen[top]; ok {
			return v
		}
		if len(seen) >= max {
			return true
		}
		if seen == nil {
			seen = make(map[string]bool)
		}
		v := local(top)
		seen[top] = v
		return v
	}
}

// hideOne is what the path or file URL w, a whole word of a text, becomes.
func (ps serverPaths) hideOne(w string, local func(string) bool) string {
	if strings.HasPrefix(w, "../") {
		// a relative path that climbs out of the directory it is read
		// from (a policy's ../alice-notes/notes.md) says where it lies as
		// an absolute path does
		path := strings.TrimRight(w, ".")
		if name := lastName(path); name != "" {
			return name + w[len(path):]
		}
		return w
	}
	if len(w) > 5 && strings.EqualFold(w[:5], "file:") {
		path := fileURLPath(w)
		if path == "" {
			return w
		}
		// the store's, the policy file's and the home's names first; an
		// escape decoded is escaped again, as the text around it was
		for _, p := range ps {
			if q := replacePath(path, p.path, p.name); q != path {
				return text.Escape(q)
			}
		}
		if h := baseOf(path, local); h != path {
			return text.Escape(h)
		}
		return w
	}
	return baseOf(w, local)
}

// fileURLPath is the path of the file URL w when it names this host
// (file:///p or file://localhost/p), its escapes decoded; "" otherwise.
func fileURLPath(w string) string {
	rest := w[len("file:"):]
	if !strings.HasPrefix(rest, "//") {
		return ""
	}
	rest = rest[2:]
	if len(rest) >= len("localhost/") && strings.EqualFold(rest[:len("localhost")], "localhost") {
		rest = rest[len("localhost"):]
	}
	if !strings.HasPrefix(rest, "/") {
		return ""
	}
	if p, err := url.PathUnescape(rest); err == nil {
		rest = p
	}
	// file:///C:/Users/... names a Windows path, as C:\Users\...
	if len(rest) > 3 && rest[0] == '/' && isDrive(rest[1:]) {
		rest = strings.ReplaceAll(rest[1:], "/", `\`)
	}
	return rest
}

// baseOf is the absolute path p as its base name when its first directory
// is one of this machine's (local), p as it is otherwise. A sentence's
// full stop after it is not the name's.
func baseOf(p string, local func(string) bool) string {
	path := strings.TrimRight(p, ".")
	top := topOf(path)
	if top == "" || !local(top) {
		return p
	}
	base := lastName(path)
	if base == "" {
		return p
	}
	return base + p[len(path):]
}

// lastName is the last name in the path p that is not "." or "..": docs
// of /srv/docs, /srv/docs/ and /srv/docs/./ (a directory as a git URL or a
// policy may write it); "" when p has none.
func lastName(p string) string {
	for {
		p = strings.TrimRight(p, `/\`)
		i := strings.LastIndexAny(p, `/\`)
		if name := p[i+1:]; name != "." && name != ".." {
			return name
		}
		if i < 0 {
			return ""
		}
		p = p[:i]
	}
}

// topOf is the first directory of the absolute path p: /srv of
// /srv/docs/a.md, C:\Users of C:\Users\a or C:/Users/a, \\host\share
// of \\host\share\a; "" when p is a root.
func topOf(p string) string {
	var from int
	switch {
	case strings.HasPrefix(p, `\\`):
		// \\host\share: the share is the root's part
		i := strings.IndexAny(p[2:], `/\`)
		if i < 0 {
			return ""
		}
		from = 2 + i + 1
	case isDrive(p):
		from = 3
	case strings.HasPrefix(p, "/"):
		// //srv/a.md is /srv/a.md to the machine
		p, from = "/"+strings.TrimLeft(p, "/"), 1
	default:
		return ""
	}
	if from >= len(p) {
		return ""
	}
	top := p
	if i := strings.IndexAny(p[from:], `/\`); i >= 0 {
		top = p[:from+i]
	}
	if from > 1 {
		// Windows reads C:/Users as C:\Users
		top = strings.ReplaceAll(top, "/", `\`)
	}
	return top
}

// isDrive reports whether p starts with a Windows drive's root: C:\ or C:/.
func isDrive(p string) bool {
	return len(p) >= 3 && ('a' <= p[0]|0x20 && p[0]|0x20 <= 'z') && p[1] == ':' && (p[2] == '\\' || p[2] == '/')
}

// onThisMachine reports whether top, the first directory of an absolute
// path, is there on this machine (anything but "does not exist" counts:
// a directory it may not read is still its own).
func onThisMachine(top string) bool {
	if !filepath.IsAbs(top) {
		return false
	}
	_, err := os.Lstat(top)
	return !errors.Is(err, fs.ErrNotExist)
}

// otherPath matches, as its first group, a path that starts a word (at the
// start, or after a space, a no-break one too, a quote, a parenthesis, a
// bracket, '=', ',' or ';'), up to a character that ends it in a message (a
// space, a quote, a colon, a parenthesis, a bracket, a comma or a
// semicolon): a Unix path (/x), a Windows one (C:\x, C:/x,
// \\host\share), a file URL (file:///x) or a relative path that climbs
// out (../x). A URL's "//host/path" does not start a word (a lone "//srv/x"
// does, the machine reads it as /srv/x), and "<store>/x" and "~/x" are not
// absolute.
var otherPath = sync.OnceValue(func() *regexp.Regexp {
	const end = "\\s\"'`:;,()\\[\\]"
	return regexp.MustCompile("(?:^|[\\s\\p{Zs}\"'(\\[=,;`])(" +
		"(?i:file)://[^\\s\"'`;,()\\[\\]]*" + // a URL's colon is its own
		"|/+[^/" + end + "][^" + end + "]*" +
		"|[A-Za-z]:[\\\\/][^" + end + "]*" +
		"|\\.\\./[^" + end + "]*" +
		"|\\\\\\\\[^\\\\/" + end + "]+[\\\\/][^" + end + "]*)")
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

// hideBelow replaces each path in s that is the directory root, a whole
// path, or a path below it by its last name: a sentence's full stop after
// it is not the name's, and what is below the root ends where otherPath
// ends a path. The root is found whole, spaces and all.
func hideBelow(s, root string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, root)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(root)
		if (i > 0 && pathByte(s[i-1])) || (end < len(s) && s[end] != '/' && s[end] != '\\' && continues(s[end:])) {
			b.WriteString(s[:end])
			s = s[end:]
			continue
		}
		j := end
		for j < len(s) && !strings.ContainsRune(pathEnd, rune(s[j])) && !isSpace(s[j]) {
			j++
		}
		w := s[i:j]
		path := strings.TrimRight(w, ".")
		name := lastName(path)
		if name == "" {
			name, path = w, w
		}
		b.WriteString(s[:i] + name + w[len(path):])
		s = s[j:]
	}
}

// pathEnd are the characters, besides white space, that end a path in a
// message (otherPath's).
const pathEnd = "\"'`:;,()[]"

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
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

// declaredForClient is how the server words for the client of req a path
// or URL the operator's policy declares (a source's path and url, a
// document's provenance): as forClient does, and over HTTP a relative path
// that climbs out of the policy's directory (../alice/notes.md, which says
// where on the server a document lies as an absolute path would) as its
// last name. A path below the policy's directory, the policy's own name,
// stays.
func (s *Server) declaredForClient(req mcp.Request) func(string) string {
	if !remote(req) {
		return func(t string) string { return t }
	}
	return func(v string) string {
		if v != "" && !filepath.IsAbs(v) && !filepath.IsLocal(v) && !strings.Contains(v, "://") {
			if name := lastName(v); name != "" {
				return name
			}
		}
		return s.paths.hideOn(v, s.onMachine())
	}
}

// forClient is how the server words text for the client of req: as it is
// over stdio, with the server's paths hidden over HTTP.
func (s *Server) forClient(req mcp.Request) func(string) string {
	if !remote(req) {
		return func(t string) string { return t }
	}
	local := s.onMachine()
	return func(t string) string { return s.paths.hideOn(t, local) }
}

// onMachine is what tells hiding whether a path's first directory is this
// machine's: onThisMachine, unless a test counts the looks (lookFor).
func (s *Server) onMachine() func(string) bool {
	if s.lookFor != nil {
		return s.lookFor
	}
	return onThisMachine
}

// noteForClient is how the server words for the client of req the free
// text the operator writes in readproof.toml for clients to read (a
// resource's description): as every other text (forClient: over HTTP
// without the server's paths), with every MCP bearer token in it masked as
// the log masks it (maskTokens), over stdio too: a note is read by every
// token holder, and a token pasted into it is a secret. Before session 29
// it reached clients as written.
func (s *Server) noteForClient(req mcp.Request) func(string) string {
	clean := s.forClient(req)
	return func(t string) string { return maskTokens(clean(t)) }
}
