package sourcespec

import (
	"errors"
	"fmt"
	"strings"

	"github.com/readproof/readproof/internal/text"
)

// A header value is literal text with ${NAME} references, NAME being
// [A-Za-z_][A-Za-z0-9_]*. "$$" stands for one "$"; a "$" followed by anything
// else is literal. Anything else starting with "${" is malformed.

// Part is one piece of a parsed value: literal text or a reference.
type Part struct {
	Text string // the literal text, or the variable name
	Ref  bool   // Text names a variable
}

// ParseRefs splits v into literal text and ${NAME} references.
func ParseRefs(v string) ([]Part, error) {
	var parts []Part
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			parts = append(parts, Part{Text: lit.String()})
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
				return nil, errors.New(`unterminated ${ (write ${NAME}, or $${ for a literal "${")`)
			}
			name := v[i+2 : i+2+end]
			if !ValidEnvName(name) {
				return nil, fmt.Errorf("malformed reference ${%s}: names are letters, digits and _, not starting with a digit", text.ShortenWith(name, 40, "..."))
			}
			flush()
			parts = append(parts, Part{Text: name, Ref: true})
			i += 2 + end
		default:
			lit.WriteByte('$')
		}
	}
	flush()
	return parts, nil
}

func ValidEnvName(s string) bool {
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

// RefNames lists the variables v references, in order, without repeats.
func RefNames(v string) ([]string, error) {
	parts, err := ParseRefs(v)
	if err != nil {
		return nil, err
	}
	var names []string
	seen := map[string]bool{}
	for _, p := range parts {
		if p.Ref && !seen[p.Text] {
			seen[p.Text] = true
			names = append(names, p.Text)
		}
	}
	return names, nil
}

// UnsetError names a referenced variable that is not set.
type UnsetError struct{ Name string }

func (e *UnsetError) Error() string { return "environment variable " + e.Name + " is not set" }

// ExpandRefs resolves v's references with lookup. It never puts a
// variable's value into an error.
func ExpandRefs(v string, lookup func(string) (string, bool)) (string, error) {
	parts, err := ParseRefs(v)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, p := range parts {
		if !p.Ref {
			b.WriteString(p.Text)
			continue
		}
		val, ok := lookup(p.Text)
		if !ok {
			return "", &UnsetError{Name: p.Text}
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// BadHeaderByte reports whether s holds a byte that may not appear in an HTTP
// header value (control characters other than tab, and DEL).
func BadHeaderByte(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return true
		}
	}
	return false
}

// ValidHeaderName reports whether s is an HTTP token.
func ValidHeaderName(s string) bool {
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
