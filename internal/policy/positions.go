package policy

import (
	"strconv"
	"strings"

	"github.com/BurntSushi/toml"
)

// keyPath names one key in the document the way errors show it:
// resource[2].source.headers."X Y", keys quoted when they are not bare and
// "[n]" indexes counting [[...]] blocks and array elements from 1. The nil
// *keyPath is the document root.
type keyPath struct {
	parent *keyPath
	s      string // the whole path, as shown; made by String on first use
	name   string // raw key name of the last element; "" for an index
	isIdx  bool
	n      int // the index, counted from 1, when isIdx
}

// root is the path of the document itself.
var root *keyPath

func (p *keyPath) child(name string) *keyPath {
	return &keyPath{parent: p, name: name}
}

func (p *keyPath) index(n int) *keyPath {
	return &keyPath{parent: p, isIdx: true, n: n}
}

// String is the path as errors show it. Every path but the root's is
// non-empty, so s == "" means not made yet; a path's string is only needed
// for an error or by the position scanner, not when a file is accepted.
func (p *keyPath) String() string {
	if p == nil {
		return ""
	}
	if p.s == "" {
		if p.isIdx {
			p.s = p.parent.String() + "[" + strconv.Itoa(p.n) + "]"
		} else if ps := p.parent.String(); ps != "" {
			p.s = ps + "." + encodeKey(p.name)
		} else {
			p.s = encodeKey(p.name)
		}
	}
	return p.s
}

// tomlKey is the key as BurntSushi's MetaData spells it (no indexes).
func (p *keyPath) tomlKey() string {
	var names []string
	for q := p; q != nil; q = q.parent {
		if !q.isIdx {
			names = append(names, q.name)
		}
	}
	for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
		names[i], names[j] = names[j], names[i]
	}
	return toml.Key(names).String()
}

// positions maps every key of a document to the line it starts on.
type positions struct {
	lines map[string]int
	// order lists the recorded paths in document order.
	order []*keyPath
}

func (ps *positions) record(p *keyPath, line int) {
	if _, ok := ps.lines[p.String()]; !ok {
		ps.lines[p.String()] = line
		ps.order = append(ps.order, p)
	}
}

func (ps *positions) has(p *keyPath) bool {
	_, ok := ps.lines[p.String()]
	return ok
}

// lineOf is the line of p: from the fast reader's record when the file was
// read by it, else from the position scanner's.
func (c *checker) lineOf(p *keyPath) int {
	if c.fast != nil {
		return c.fast.lineOf(p)
	}
	return c.pos.lineOf(p)
}

// keySet says which keys the file sets in one table.
type keySet struct {
	c      *checker
	parent *keyPath
	t      *ftable // the table, when the fast reader read the file
	// bits are the keys of a source, as fastSource records them
	// (sourceKeys), where the fast reader keeps no table (t nil): the
	// fast path's resources.
	bits uint16
}

// presence reports which keys the file sets in the table at parent.
func (c *checker) presence(parent *keyPath) keySet {
	ks := keySet{c: c, parent: parent}
	if c.fast != nil {
		if v, _, ok := c.fast.find(parent); ok && v.kind == fTable {
			ks.t = v.t
		}
	}
	return ks
}

func (ks keySet) has(name string) bool {
	if ks.c.fast != nil {
		if ks.t == nil {
			return ks.bits&sourceKeyBit(name) != 0
		}
		_, i := ks.t.get(name)
		return i >= 0
	}
	return ks.c.pos.has(ks.parent.child(name))
}

// lineOf returns the line of p, or of its nearest recorded ancestor when p
// itself is absent (a missing key is reported where its table starts).
func (ps *positions) lineOf(p *keyPath) int {
	for q := p; q != nil; q = q.parent {
		if l, ok := ps.lines[q.String()]; ok {
			return l
		}
	}
	return 0
}

// firstOf returns the first occurrence of a key that BurntSushi reports
// without array indexes.
func (ps *positions) firstOf(k toml.Key) (*keyPath, bool) {
	want := k.String()
	for _, p := range ps.order {
		if p.tomlKey() == want {
			return p, true
		}
	}
	return nil, false
}

// scanPositions records the line of every key, table header and array
// element of s. s must already have been accepted by the TOML parser, so the
// scanner only tracks structure (strings, arrays, inline tables, headers)
// and never has to report syntax errors; it still never loops or panics on
// any input.
func scanPositions(s string) *positions {
	sc := &scanner{
		s:    s,
		line: 1,
		pos:  &positions{lines: map[string]int{}},
		arr:  map[string]int{},
	}
	if strings.HasPrefix(s, "\ufeff") {
		sc.i = len("\ufeff")
	}
	sc.document()
	return sc.pos
}

type scanner struct {
	s    string
	i    int
	line int
	pos  *positions
	// arr counts the [[...]] blocks seen for each array-of-tables path.
	arr map[string]int
}

func (sc *scanner) eof() bool { return sc.i >= len(sc.s) }

func (sc *scanner) peek() byte {
	if sc.eof() {
		return 0
	}
	return sc.s[sc.i]
}

func (sc *scanner) at(prefix string) bool { return strings.HasPrefix(sc.s[sc.i:], prefix) }

// adv consumes one byte, counting lines.
func (sc *scanner) adv() {
	if sc.eof() {
		return
	}
	if sc.s[sc.i] == '\n' {
		sc.line++
	}
	sc.i++
}

func (sc *scanner) skipSpace() {
	for !sc.eof() && (sc.s[sc.i] == ' ' || sc.s[sc.i] == '\t') {
		sc.i++
	}
}

// skipBlank skips whitespace, newlines and comments.
func (sc *scanner) skipBlank() {
	for !sc.eof() {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n':
			sc.adv()
		case '#':
			for !sc.eof() && sc.s[sc.i] != '\n' {
				sc.i++
			}
		default:
			return
		}
	}
}

func (sc *scanner) document() {
	var cur *keyPath
	for {
		sc.skipBlank()
		if sc.eof() {
			return
		}
		start, line := sc.i, sc.line
		if sc.peek() == '[' {
			arr := sc.at("[[")
			sc.i++
			if arr {
				sc.i++
			}
			names := sc.keys()
			sc.skipSpace()
			if sc.peek() == ']' {
				sc.i++
			}
			if arr && sc.peek() == ']' {
				sc.i++
			}
			cur = sc.header(names, arr, line)
		} else {
			sc.keyValue(cur, line)
		}
		if sc.i == start {
			sc.adv()
		}
	}
}

// keyValue scans a key = value pair under the table at p, recording the
// position (line) of each key path it names.
func (sc *scanner) keyValue(p *keyPath, line int) {
	names := sc.keys()
	sc.skipSpace()
	if sc.peek() == '=' {
		sc.i++
	}
	sc.skipSpace()
	for _, n := range names {
		p = p.child(n)
		sc.pos.record(p, line)
	}
	sc.value(p)
}

// header resolves a [a.b] or [[a.b]] header to the path of the table it
// opens: a prefix naming an array of tables means its latest element.
func (sc *scanner) header(names []string, arr bool, line int) *keyPath {
	var p *keyPath
	for j, n := range names {
		p = p.child(n)
		sc.pos.record(p, line)
		if arr && j == len(names)-1 {
			k := p.String()
			sc.arr[k]++
			p = p.index(sc.arr[k])
			sc.pos.record(p, line)
		} else if c := sc.arr[p.String()]; c > 0 {
			p = p.index(c)
		}
	}
	return p
}

// keys reads a possibly dotted key.
func (sc *scanner) keys() []string {
	var out []string
	for {
		sc.skipSpace()
		before := sc.i
		out = append(out, sc.key())
		sc.skipSpace()
		if sc.peek() != '.' || sc.i == before {
			return out
		}
		sc.i++
	}
}

func (sc *scanner) key() string {
	switch sc.peek() {
	case '"':
		start := sc.i
		sc.basicString()
		return decodeBasicString(sc.s[start:sc.i])
	case '\'':
		sc.i++
		start := sc.i
		for !sc.eof() && sc.s[sc.i] != '\'' && sc.s[sc.i] != '\n' {
			sc.i++
		}
		k := sc.s[start:sc.i]
		if sc.peek() == '\'' {
			sc.i++
		}
		return k
	default:
		start := sc.i
		for !sc.eof() && isBareKeyByte(sc.s[sc.i]) {
			sc.i++
		}
		return sc.s[start:sc.i]
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// decodeBasicString turns a quoted key into the key name, using the TOML
// parser itself so escapes mean exactly what they mean to it.
func decodeBasicString(quoted string) string {
	var m map[string]string
	if _, err := toml.Decode("k = "+quoted, &m); err != nil {
		return quoted
	}
	return m["k"]
}

// basicString consumes "..." starting at the opening quote.
func (sc *scanner) basicString() {
	sc.i++
	for !sc.eof() {
		switch sc.s[sc.i] {
		case '\\':
			sc.i++
			if !sc.eof() && sc.s[sc.i] != '\n' {
				sc.i++
			}
		case '"':
			sc.i++
			return
		case '\n':
			return
		default:
			sc.i++
		}
	}
}

// multiline consumes the body of a """ or ”' string after its opening
// delimiter, including up to two quotes that end the content.
func (sc *scanner) multiline(q byte, escapes bool) {
	delim := strings.Repeat(string(q), 3)
	for !sc.eof() {
		if escapes && sc.s[sc.i] == '\\' {
			sc.adv()
			sc.adv()
			continue
		}
		if sc.at(delim) {
			for n := 0; n < 5 && sc.peek() == q; n++ {
				sc.i++
			}
			return
		}
		sc.adv()
	}
}

func (sc *scanner) value(p *keyPath) {
	switch {
	case sc.at(`"""`):
		sc.i += 3
		sc.multiline('"', true)
	case sc.at(`'''`):
		sc.i += 3
		sc.multiline('\'', false)
	case sc.peek() == '"':
		sc.basicString()
	case sc.peek() == '\'':
		sc.i++
		for !sc.eof() && sc.s[sc.i] != '\'' && sc.s[sc.i] != '\n' {
			sc.i++
		}
		if sc.peek() == '\'' {
			sc.i++
		}
	case sc.peek() == '[':
		sc.i++
		for n := 1; ; n++ {
			sc.skipBlank()
			if sc.eof() {
				return
			}
			if sc.peek() == ']' {
				sc.i++
				return
			}
			before := sc.i
			q := p.index(n)
			sc.pos.record(q, sc.line)
			sc.value(q)
			sc.skipBlank()
			if sc.peek() == ',' {
				sc.i++
			} else if sc.i == before {
				sc.adv()
			}
		}
	case sc.peek() == '{':
		sc.i++
		for {
			sc.skipBlank()
			if sc.eof() {
				return
			}
			if sc.peek() == '}' {
				sc.i++
				return
			}
			before := sc.i
			sc.keyValue(p, sc.line)
			sc.skipBlank()
			if sc.peek() == ',' {
				sc.i++
			} else if sc.i == before {
				sc.adv()
			}
		}
	default:
		sc.scalar()
	}
}

// scalar consumes a number, boolean or date-time. A date followed by a
// space and a time ("1979-05-27 07:32:00Z") is one value.
func (sc *scanner) scalar() {
	start := sc.i
	sc.token()
	tok := sc.s[start:sc.i]
	if len(tok) == 10 && tok[4] == '-' && tok[7] == '-' && sc.at(" ") &&
		sc.i+1 < len(sc.s) && sc.s[sc.i+1] >= '0' && sc.s[sc.i+1] <= '9' {
		sc.i++
		sc.token()
	}
}

func (sc *scanner) token() {
	for !sc.eof() {
		switch sc.s[sc.i] {
		case ' ', '\t', '\r', '\n', ',', ']', '}', '#':
			return
		}
		sc.i++
	}
}
