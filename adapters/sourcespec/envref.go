package sourcespec

import (
	"errors"
	"fmt"
	"slices"
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
				return nil, errUnterminated
			}
			name := v[i+2 : i+2+end]
			if !ValidEnvName(name) {
				return nil, malformedRef(name)
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
func RefNames(v string) ([]string, error) { return AppendRefNames(nil, v) }

// AppendRefNames appends RefNames(v) to dst, allocating nothing when dst
// has room: the policy checker runs it over every header of every
// resource. It scans with ParseRefs's grammar and words its errors alike
// (FuzzAppendRefNames holds the two to each other) without building the
// parts.
func AppendRefNames(dst []string, v string) ([]string, error) {
	return appendRefNames(dst, v, nil)
}

// appendRefNames is AppendRefNames, adding to *compared, when compared is
// not nil, the number of names it compared a name with one by one: its
// test counts the work at n references and 4n.
func appendRefNames(dst []string, v string, compared *int) ([]string, error) {
	start := len(dst)
	var seen map[string]bool // past maxRefSearch names: a search of them all was their square
	for i := 0; i+1 < len(v); i++ {
		if v[i] != '$' {
			continue
		}
		switch v[i+1] {
		case '$':
			i++
		case '{':
			end := strings.IndexByte(v[i+2:], '}')
			if end < 0 {
				return dst[:start], errUnterminated
			}
			name := v[i+2 : i+2+end]
			if !ValidEnvName(name) {
				return dst[:start], malformedRef(name)
			}
			i += 2 + end
			switch {
			case seen != nil:
				if seen[name] {
					continue
				}
				seen[name] = true
			default:
				if compared != nil {
					*compared += len(dst) - start
				}
				if slices.Contains(dst[start:], name) {
					continue
				}
				if len(dst)-start == maxRefSearch {
					seen = make(map[string]bool, 2*maxRefSearch)
					for _, n := range dst[start:] {
						seen[n] = true
					}
					seen[name] = true
				}
			}
			dst = append(dst, name)
		}
	}
	return dst, nil
}

// maxRefSearch is the number of names AppendRefNames finds repeats of by
// a search before it keeps them in a map.
const maxRefSearch = 16

var errUnterminated = errors.New(`unterminated ${ (write ${NAME}, or $${ for a literal "${")`)

func malformedRef(name string) error {
	return fmt.Errorf("malformed reference ${%s}: names are letters, digits and _, not starting with a digit", text.ShortenWith(name, 40, "..."))
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
