package gitstore

import (
	"strings"

	"github.com/kevinburke/ssh_config"
)

// sshPatternMatch is whether name matches the pattern pat as OpenSSH's
// match_pattern (match.c) matches it: byte by byte, case kept, a * any
// run of bytes (none included), a ? exactly one byte. (The parser's own
// matching takes a ? for zero or one character: its Host ab? applies to
// ab, which ssh's does not.)
func sshPatternMatch(name, pat string) bool {
	// glob matching with one backtrack point, the last * seen
	n, p := 0, 0
	star, mark := -1, 0
	for n < len(name) {
		switch {
		case p < len(pat) && pat[p] == '*':
			star, mark = p, n
			p++
		case p < len(pat) && (pat[p] == '?' || pat[p] == name[n]):
			n++
			p++
		case star >= 0:
			mark++
			n, p = mark, star+1
		default:
			return false
		}
	}
	for p < len(pat) && pat[p] == '*' {
		p++
	}
	return p == len(pat)
}

// sshPatternNegated is whether the parser read p as negated (written
// with a leading !, which its String leaves out). A pattern always
// matches its own text, so one whose block refuses that text is negated.
func sshPatternNegated(p *ssh_config.Pattern) bool {
	return !(&ssh_config.Host{Patterns: []*ssh_config.Pattern{p}}).Matches(p.String())
}

// sshHostMatches is whether the Host block h applies to name as ssh
// applies a Host line (readconf.c): some pattern matches and no negated
// one does, each matched by sshPatternMatch, case kept.
func sshHostMatches(h *ssh_config.Host, name string) bool {
	found := false
	for _, p := range h.Patterns {
		if !sshPatternMatch(name, p.String()) {
			continue
		}
		if sshPatternNegated(p) {
			return false
		}
		found = true
	}
	return found
}

// matchList is whether a comma-separated pattern list matches one of
// names, as OpenSSH's match_pattern_list does (a sub-pattern negated by a
// leading ! that matches refuses the list); ok is false for a list that
// is not one (an empty sub-pattern). Callers lower the case of both
// where ssh does (Match host, IgnoreUnknown).
func matchList(list string, names []string) (matched, ok bool) {
	pats := strings.Split(list, ",")
	for _, p := range pats {
		if p == "" {
			return false, false
		}
	}
	for _, n := range names {
		hit := false
		for _, p := range pats {
			neg := strings.HasPrefix(p, "!")
			if !sshPatternMatch(n, strings.TrimPrefix(p, "!")) {
				continue
			}
			if neg {
				hit = false
				break
			}
			hit = true
		}
		if hit {
			return true, true
		}
	}
	return false, true
}
