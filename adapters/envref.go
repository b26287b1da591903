package adapters

import (
	"fmt"
	"os"
	"strings"
)

// A header value is literal text with ${NAME} references, NAME being
// [A-Za-z_][A-Za-z0-9_]*. "$$" stands for one "$"; a "$" followed by anything
// else is literal. Anything else starting with "${" is malformed.

// refPart is one piece of a parsed value: literal text or a reference.
type refPart struct {
	text string
	ref  bool
}

// parseRefs splits v into literal text and ${NAME} references.
func parseRefs(v string) ([]refPart, error) {
	var parts []refPart
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, refPart{text: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if c != '$' || i+1 == len(v) {
			lit.WriteByte(c)
			continue
		}
		switch v[i+1] {
		case '$':
			lit.WriteByte('$')
			i++
		case '{':
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return nil, fmt.Errorf("unterminated ${ at byte %d; write ${NAME}, or $${ for a literal ${", i)
			}
			name := v[i+2 : i+2+end]
			if !validEnvName(name) {
				return nil, fmt.Errorf("invalid variable name %q at byte %d; names are letters, digits and _, not starting with a digit", name, i)
			}
			flush()
			parts = append(parts, refPart{text: name, ref: true})
			i += 2 + end
		default:
			lit.WriteByte('$')
		}
	}
	flush()
	return parts, nil
}

func validEnvName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '_', c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// refNames lists the variables v references, in order, without repeats.
func refNames(v string) ([]string, error) {
	parts, err := parseRefs(v)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range parts {
		if p.ref && !seen[p.text] {
			seen[p.text] = true
			names = append(names, p.text)
		}
	}
	return names, nil
}

// unsetError names a referenced variable that is not set.
type unsetError struct{ name string }

func (e *unsetError) Error() string { return "environment variable " + e.name + " is not set" }

// expandRefs resolves v's references with lookup. It never puts a
// variable's value into an error.
func expandRefs(v string, lookup func(string) (string, bool)) (string, error) {
	parts, err := parseRefs(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if !p.ref {
			b.WriteString(p.text)
			continue
		}
		val, ok := lookup(p.text)
		if !ok {
			return "", &unsetError{name: p.text}
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// envAllowed reports whether name is in env's allow-list.
func (e Env) envAllowed(name string) bool {
	for _, n := range e.EnvAllow {
		if n == name {
			return true
		}
	}
	return false
}

func (e Env) lookup() func(string) (string, bool) {
	if e.LookupEnv != nil {
		return e.LookupEnv
	}
	return os.LookupEnv
}

// badHeaderByte reports whether s holds a byte that may not appear in an HTTP
// header value (control characters other than tab, and DEL).
func badHeaderByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return true
		}
	}
	return false
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
			continue
		}
		if !strings.ContainsRune("!#$%&'*+-.^_`|~", rune(c)) {
			return false
		}
	}
	return true
}
