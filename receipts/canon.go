package receipts

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrJSON is wrapped by Canonicalize for input it refuses.
var ErrJSON = errors.New("invalid JSON arguments")

// maxJSONDepth bounds nesting so hostile input cannot exhaust the stack.
const maxJSONDepth = 256

// Canonicalize returns the canonical form of a JSON document, the form whose
// hash a receipt records for JSON arguments. The rules follow RFC 8785 (JCS):
//
//   - no whitespace between tokens;
//   - object members sorted by their names compared as UTF-16 code units;
//     duplicate names are refused;
//   - strings as UTF-8, escaping only '"', '\\' and the controls U+0000-U+001F
//     (\b \t \n \f \r by name, others as \u00xx with lower-case hex);
//     invalid UTF-8 and lone surrogate escapes are refused;
//   - numbers parsed as IEEE-754 doubles and printed the way ECMAScript's
//     Number.prototype.toString does (1.0 -> 1, 1e3 -> 1000, 1e21 -> 1e+21,
//     -0 -> 0); numbers outside the double range are refused;
//   - literals true, false, null as they are.
func Canonicalize(data []byte) ([]byte, error) {
	p := &jsonParser{in: data}
	p.skipSpace()
	out, err := p.value(nil, 0)
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.in) {
		return nil, p.fail("trailing data after the JSON value")
	}
	return out, nil
}

type jsonParser struct {
	in  []byte
	pos int
}

func (p *jsonParser) fail(format string, a ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrJSON, p.pos, fmt.Sprintf(format, a...))
}

func (p *jsonParser) skipSpace() {
	for p.pos < len(p.in) {
		switch p.in[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

func (p *jsonParser) value(out []byte, depth int) ([]byte, error) {
	if depth > maxJSONDepth {
		return nil, p.fail("nested deeper than %d levels", maxJSONDepth)
	}
	if p.pos >= len(p.in) {
		return nil, p.fail("unexpected end of input")
	}
	switch c := p.in[p.pos]; {
	case c == '{':
		return p.object(out, depth)
	case c == '[':
		return p.array(out, depth)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return nil, err
		}
		return appendJCSString(out, s), nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number(out)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if strings.HasPrefix(string(p.in[p.pos:min(len(p.in), p.pos+len(lit))]), lit) {
				p.pos += len(lit)
				return append(out, lit...), nil
			}
		}
		return nil, p.fail("unexpected character %q", c)
	}
}

func (p *jsonParser) object(out []byte, depth int) ([]byte, error) {
	p.pos++ // '{'
	type member struct {
		name  string
		key   []uint16
		value []byte
	}
	var members []member
	seen := map[string]bool{}
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == '}' {
		p.pos++
		return append(out, "{}"...), nil
	}
	for {
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != '"' {
			return nil, p.fail("expected a member name")
		}
		name, err := p.str()
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, p.fail("duplicate member name %q", truncate(name, 80))
		}
		seen[name] = true
		p.skipSpace()
		if p.pos >= len(p.in) || p.in[p.pos] != ':' {
			return nil, p.fail("expected ':' after a member name")
		}
		p.pos++
		p.skipSpace()
		v, err := p.value(nil, depth+1)
		if err != nil {
			return nil, err
		}
		members = append(members, member{name: name, key: utf16.Encode([]rune(name)), value: v})
		p.skipSpace()
		if p.pos >= len(p.in) {
			return nil, p.fail("unexpected end of input in an object")
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.in[p.pos] == '}' {
			p.pos++
			break
		}
		return nil, p.fail("expected ',' or '}' in an object")
	}
	slices.SortFunc(members, func(a, b member) int { return slices.Compare(a.key, b.key) })
	out = append(out, '{')
	for i, m := range members {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendJCSString(out, m.name)
		out = append(out, ':')
		out = append(out, m.value...)
	}
	return append(out, '}'), nil
}

func (p *jsonParser) array(out []byte, depth int) ([]byte, error) {
	p.pos++ // '['
	out = append(out, '[')
	p.skipSpace()
	if p.pos < len(p.in) && p.in[p.pos] == ']' {
		p.pos++
		return append(out, ']'), nil
	}
	for first := true; ; first = false {
		if !first {
			out = append(out, ',')
		}
		p.skipSpace()
		var err error
		if out, err = p.value(out, depth+1); err != nil {
			return nil, err
		}
		p.skipSpace()
		if p.pos >= len(p.in) {
			return nil, p.fail("unexpected end of input in an array")
		}
		if p.in[p.pos] == ',' {
			p.pos++
			continue
		}
		if p.in[p.pos] == ']' {
			p.pos++
			return append(out, ']'), nil
		}
		return nil, p.fail("expected ',' or ']' in an array")
	}
}

// str parses a JSON string at p.pos and returns its value.
func (p *jsonParser) str() (string, error) {
	p.pos++ // '"'
	var b strings.Builder
	for {
		if p.pos >= len(p.in) {
			return "", p.fail("unterminated string")
		}
		c := p.in[p.pos]
		switch {
		case c == '"':
			p.pos++
			return b.String(), nil
		case c < 0x20:
			return "", p.fail("control character %#02x in a string (escape it)", c)
		case c == '\\':
			if p.pos+1 >= len(p.in) {
				return "", p.fail("unterminated escape")
			}
			e := p.in[p.pos+1]
			p.pos += 2
			switch e {
			case '"', '\\', '/':
				b.WriteByte(e)
			case 'b':
				b.WriteByte('\b')
			case 'f':
				b.WriteByte('\f')
			case 'n':
				b.WriteByte('\n')
			case 'r':
				b.WriteByte('\r')
			case 't':
				b.WriteByte('\t')
			case 'u':
				r, err := p.hex4()
				if err != nil {
					return "", err
				}
				if utf16.IsSurrogate(r) {
					if r >= 0xdc00 || p.pos+1 >= len(p.in) || p.in[p.pos] != '\\' || p.in[p.pos+1] != 'u' {
						return "", p.fail("lone surrogate \\u%04x in a string", r)
					}
					p.pos += 2
					lo, err := p.hex4()
					if err != nil {
						return "", err
					}
					if lo < 0xdc00 || lo > 0xdfff {
						return "", p.fail("lone surrogate \\u%04x in a string", r)
					}
					r = utf16.DecodeRune(r, lo)
				}
				b.WriteRune(r)
			default:
				return "", p.fail("invalid escape \\%c", e)
			}
		default:
			r, size := utf8.DecodeRune(p.in[p.pos:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.fail("invalid UTF-8 in a string")
			}
			b.Write(p.in[p.pos : p.pos+size])
			p.pos += size
		}
	}
}

func (p *jsonParser) hex4() (rune, error) {
	if p.pos+4 > len(p.in) {
		return 0, p.fail("short \\u escape")
	}
	v, err := strconv.ParseUint(string(p.in[p.pos:p.pos+4]), 16, 16)
	if err != nil {
		return 0, p.fail("invalid \\u escape %q", p.in[p.pos:p.pos+4])
	}
	p.pos += 4
	return rune(v), nil
}

// number parses a number following the JSON grammar and appends its
// ECMAScript form.
func (p *jsonParser) number(out []byte) ([]byte, error) {
	start := p.pos
	digits := func() int {
		n := 0
		for p.pos < len(p.in) && p.in[p.pos] >= '0' && p.in[p.pos] <= '9' {
			p.pos++
			n++
		}
		return n
	}
	if p.in[p.pos] == '-' {
		p.pos++
	}
	if p.pos < len(p.in) && p.in[p.pos] == '0' {
		p.pos++
	} else if digits() == 0 {
		return nil, p.fail("invalid number")
	}
	if p.pos < len(p.in) && p.in[p.pos] == '.' {
		p.pos++
		if digits() == 0 {
			return nil, p.fail("invalid number: no digits after '.'")
		}
	}
	if p.pos < len(p.in) && (p.in[p.pos] == 'e' || p.in[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.in) && (p.in[p.pos] == '+' || p.in[p.pos] == '-') {
			p.pos++
		}
		if digits() == 0 {
			return nil, p.fail("invalid number: no digits in the exponent")
		}
	}
	f, err := strconv.ParseFloat(string(p.in[start:p.pos]), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, p.fail("number %s outside the range of a double", truncate(string(p.in[start:p.pos]), 40))
	}
	return appendESNumber(out, f), nil
}

// appendESNumber formats a finite double like ECMAScript's
// Number.prototype.toString.
func appendESNumber(out []byte, f float64) []byte {
	if f == 0 {
		return append(out, '0')
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// Shortest round-trip digits: "d.ddddde±XX".
	e := strconv.FormatFloat(f, 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	k, n := len(digits), x+1
	switch {
	case k <= n && n <= 21:
		out = append(out, digits...)
		for i := 0; i < n-k; i++ {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:]...)
	case -6 < n && n <= 0:
		out = append(out, "0."...)
		for i := 0; i < -n; i++ {
			out = append(out, '0')
		}
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return out
}

func appendJCSString(out []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, '\\', 'b')
		case '\t':
			out = append(out, '\\', 't')
		case '\n':
			out = append(out, '\\', 'n')
		case '\f':
			out = append(out, '\\', 'f')
		case '\r':
			out = append(out, '\\', 'r')
		default:
			if c < 0x20 {
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			} else {
				out = append(out, c)
			}
		}
	}
	return append(out, '"')
}
