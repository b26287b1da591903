package policy

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// The fast reader: a single pass over the TOML that policy files are made of
// (tables, arrays of tables, bare and quoted keys, dotted keys, one-line
// strings, decimal integers, arrays and one-line inline tables), building a
// tree that records the line of every key. Anything else, and anything
// wrong, makes it give up (ok false): Parse then reads the file with
// BurntSushi/toml and the position scanner, which also word every error. So
// the fast reader never has to explain a problem; it only has to be right
// about what it accepts, and FuzzFastMatchesTOML holds it to BurntSushi's
// reading of the same text.

// ftable is a table of the fast reader's tree.
type ftable struct {
	ents []fentry
	// How the table came to be: by a [header] (explicit), as the prefix of
	// a header (implicit, may be defined later), by dotted keys (dotted, in
	// section), or as an inline table (closed: cannot be extended).
	explicit, dotted, closed bool
	section                  int
	// line is where the table starts (its header, or the value's line).
	line int
}

// fentry is one key of a table.
type fentry struct {
	key  string
	val  fval
	line int // where the key is defined
}

// fval is a value of the tree; kind says which field holds it. (A struct
// rather than an interface: boxing each string was a third of the
// allocations.)
type fval struct {
	kind fkind
	s    string
	n    int64
	arr  []fval  // fArray: a static array; fTables: [[header]] tables
	t    *ftable // fTable
}

type fkind uint8

const (
	fNone fkind = iota
	fString
	fInt
	fArray
	fTable
	fTables
)

// get returns the value of key k (kind fNone when absent) and its index.
func (t *ftable) get(k string) (*fval, int) {
	for i := range t.ents {
		if t.ents[i].key == k {
			return &t.ents[i].val, i
		}
	}
	return &fval{}, -1
}

func (t *ftable) set(k string, v fval, line int) {
	if t.ents == nil {
		t.ents = make([]fentry, 0, 2)
	}
	t.ents = append(t.ents, fentry{k, v, line})
}

// maxFastKeys bounds the keys of one table the fast reader accepts, so its
// linear key search stays cheap; a bigger table goes to BurntSushi.
const maxFastKeys = 64

type fastReader struct {
	s       string
	i       int
	line    int
	section int
	names   []string // keys' buffer, reused
	slab    []ftable // tables are taken from it, to allocate fewer
	hint    int      // tablesHint, once counted
}

// tablesHint is the capacity to give an array of tables: the number of
// [[ in the file (a guess, never a limit).
func (r *fastReader) tablesHint() int {
	if r.hint == 0 {
		r.hint = strings.Count(r.s, "[[") + 1
	}
	return r.hint
}

// table returns a new table.
func (r *fastReader) table(t ftable) *ftable {
	if len(r.slab) == 0 {
		r.slab = make([]ftable, 64)
	}
	nt := &r.slab[0]
	r.slab = r.slab[1:]
	*nt = t
	return nt
}

// fastRead parses s, or gives up (ok false) on anything it does not handle.
func fastRead(s string) (root *ftable, ok bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	r := &fastReader{s: s, line: 1}
	if strings.HasPrefix(s, "\ufeff") {
		r.i = len("\ufeff")
	}
	root = &ftable{explicit: true, line: 1}
	cur := root
	for {
		if !r.blank() {
			return nil, false
		}
		if r.i >= len(r.s) {
			return root, true
		}
		if r.s[r.i] == '[' {
			t, ok := r.header(root)
			if !ok {
				return nil, false
			}
			cur = t
		} else if !r.keyValue(cur) {
			return nil, false
		}
		if !r.endOfLine() {
			return nil, false
		}
	}
}

// blank skips spaces, newlines and comments; false on a character TOML
// does not allow there (a control character in a comment, a lone CR).
func (r *fastReader) blank() bool {
	for r.i < len(r.s) {
		switch c := r.s[r.i]; c {
		case ' ', '\t':
			r.i++
		case '\n':
			r.i++
			r.line++
		case '\r':
			if r.i+1 >= len(r.s) || r.s[r.i+1] != '\n' {
				return false
			}
			r.i += 2
			r.line++
		case '#':
			if !r.comment() {
				return false
			}
		default:
			return true
		}
	}
	return true
}

// comment skips a comment up to (not including) its newline.
func (r *fastReader) comment() bool {
	for r.i++; r.i < len(r.s); r.i++ {
		c := r.s[r.i]
		if c == '\n' || c == '\r' {
			return true
		}
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}

// endOfLine accepts spaces and a comment, then a newline or the end.
func (r *fastReader) endOfLine() bool {
	r.spaces()
	if r.i < len(r.s) && r.s[r.i] == '#' && !r.comment() {
		return false
	}
	if r.i >= len(r.s) {
		return true
	}
	switch r.s[r.i] {
	case '\n':
		r.i++
		r.line++
		return true
	case '\r':
		if r.i+1 < len(r.s) && r.s[r.i+1] == '\n' {
			r.i += 2
			r.line++
			return true
		}
	}
	return false
}

func (r *fastReader) spaces() {
	for r.i < len(r.s) && (r.s[r.i] == ' ' || r.s[r.i] == '\t') {
		r.i++
	}
}

// header reads [a.b] or [[a.b]] and returns the table it opens.
func (r *fastReader) header(root *ftable) (*ftable, bool) {
	line := r.line
	arr := strings.HasPrefix(r.s[r.i:], "[[")
	r.i++
	if arr {
		r.i++
	}
	names, ok := r.keys()
	if !ok {
		return nil, false
	}
	if arr {
		if !strings.HasPrefix(r.s[r.i:], "]]") {
			return nil, false
		}
		r.i += 2
	} else {
		if r.i >= len(r.s) || r.s[r.i] != ']' {
			return nil, false
		}
		r.i++
	}
	r.section++
	t := root
	for j, n := range names {
		last := j == len(names)-1
		fv, _ := t.get(n)
		switch fv.kind {
		case fNone:
			if len(t.ents) >= maxFastKeys || t.closed {
				return nil, false
			}
			if last && arr {
				nt := r.table(ftable{explicit: true, line: line})
				elems := make([]fval, 1, r.tablesHint())
				elems[0] = fval{kind: fTable, t: nt}
				t.set(n, fval{kind: fTables, arr: elems}, line)
				return nt, true
			}
			nt := r.table(ftable{explicit: last, line: line})
			t.set(n, fval{kind: fTable, t: nt}, line)
			t = nt
		case fTable:
			v := fv.t
			if v.closed || v.dotted {
				return nil, false
			}
			if last {
				if arr || v.explicit {
					return nil, false
				}
				v.explicit = true
			}
			t = v
		case fTables:
			if last && !arr {
				return nil, false
			}
			if last {
				nt := r.table(ftable{explicit: true, line: line})
				fv.arr = append(fv.arr, fval{kind: fTable, t: nt})
				return nt, true
			}
			t = fv.arr[len(fv.arr)-1].t
		default:
			return nil, false
		}
	}
	return t, true
}

// keys reads a possibly dotted key, with the spaces around it.
// The slice is reused by the next call.
func (r *fastReader) keys() ([]string, bool) {
	out := r.names[:0]
	defer func() { r.names = out[:0] }()
	for {
		r.spaces()
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		out = append(out, k)
		r.spaces()
		if r.i >= len(r.s) || r.s[r.i] != '.' {
			return out, true
		}
		r.i++
	}
}

func (r *fastReader) key() (string, bool) {
	if r.i >= len(r.s) {
		return "", false
	}
	var k string
	var ok bool
	switch r.s[r.i] {
	case '"':
		k, ok = r.basicString()
	case '\'':
		k, ok = r.literalString()
	default:
		start := r.i
		for r.i < len(r.s) && isBareKeyByte(r.s[r.i]) {
			r.i++
		}
		k, ok = r.s[start:r.i], true
	}
	return k, ok && k != ""
}

// keyValue reads k = v (k possibly dotted) into t.
func (r *fastReader) keyValue(t *ftable) bool {
	line := r.line
	names, ok := r.keys()
	if !ok || r.i >= len(r.s) || r.s[r.i] != '=' {
		return false
	}
	r.i++
	r.spaces()
	for _, n := range names[:len(names)-1] {
		fv, _ := t.get(n)
		switch fv.kind {
		case fNone:
			if len(t.ents) >= maxFastKeys || t.closed {
				return false
			}
			nt := r.table(ftable{dotted: true, section: r.section, line: line})
			t.set(n, fval{kind: fTable, t: nt}, line)
			t = nt
		case fTable:
			// Only a table these dotted keys made in this same section
			// may be extended by them.
			v := fv.t
			if !v.dotted || v.section != r.section || v.closed {
				return false
			}
			t = v
		default:
			return false
		}
	}
	k := names[len(names)-1]
	if _, i := t.get(k); i >= 0 || len(t.ents) >= maxFastKeys || t.closed {
		return false
	}
	v, ok := r.value(line)
	if !ok {
		return false
	}
	t.set(k, v, line)
	return true
}

// value reads a value starting at r.i.
func (r *fastReader) value(line int) (fval, bool) {
	if r.i >= len(r.s) {
		return fval{}, false
	}
	var v fval
	var ok bool
	switch c := r.s[r.i]; {
	case c == '"':
		if strings.HasPrefix(r.s[r.i:], `"""`) {
			return fval{}, false
		}
		v.kind = fString
		v.s, ok = r.basicString()
	case c == '\'':
		if strings.HasPrefix(r.s[r.i:], `'''`) {
			return fval{}, false
		}
		v.kind = fString
		v.s, ok = r.literalString()
	case c == '[':
		v.kind = fArray
		v.arr, ok = r.array()
	case c == '{':
		v.kind = fTable
		v.t, ok = r.inlineTable(line)
	case c >= '0' && c <= '9' || c == '+' || c == '-':
		v.kind = fInt
		v.n, ok = r.integer()
	}
	return v, ok
}

// integer reads a decimal integer: no underscores, no leading zeros, and a
// delimiter after it (so floats and dates give up).
func (r *fastReader) integer() (int64, bool) {
	start := r.i
	if r.s[r.i] == '+' || r.s[r.i] == '-' {
		r.i++
	}
	digits := r.i
	for r.i < len(r.s) && r.s[r.i] >= '0' && r.s[r.i] <= '9' {
		r.i++
	}
	if r.i == digits || r.s[digits] == '0' && r.i-digits > 1 {
		return 0, false
	}
	if r.i < len(r.s) {
		switch r.s[r.i] {
		case ' ', '\t', '\n', '\r', ',', ']', '}', '#':
		default:
			return 0, false
		}
	}
	n, err := strconv.ParseInt(r.s[start:r.i], 10, 64)
	return n, err == nil
}

// basicString reads "..." with the escapes every TOML version has.
func (r *fastReader) basicString() (string, bool) {
	r.i++
	start := r.i
	var b []byte // only when there is an escape
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '"':
			var s string
			if b == nil {
				s = r.s[start:r.i]
			} else {
				s = string(append(b, r.s[start:r.i]...))
			}
			r.i++
			return s, true
		case c == '\\':
			b = append(b, r.s[start:r.i]...)
			if r.i+1 >= len(r.s) {
				return "", false
			}
			e := r.s[r.i+1]
			r.i += 2
			switch e {
			case 'b':
				b = append(b, '\b')
			case 't':
				b = append(b, '\t')
			case 'n':
				b = append(b, '\n')
			case 'f':
				b = append(b, '\f')
			case 'r':
				b = append(b, '\r')
			case '"':
				b = append(b, '"')
			case '\\':
				b = append(b, '\\')
			case 'u', 'U':
				n := 4
				if e == 'U' {
					n = 8
				}
				if r.i+n > len(r.s) {
					return "", false
				}
				v, err := strconv.ParseUint(r.s[r.i:r.i+n], 16, 32)
				if err != nil || strings.ContainsAny(r.s[r.i:r.i+n], "+-") {
					return "", false
				}
				ru := rune(v)
				if !utf8.ValidRune(ru) {
					return "", false
				}
				b = utf8.AppendRune(b, ru)
				r.i += n
			default:
				return "", false
			}
			start = r.i
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", false
		default:
			r.i++
		}
	}
	return "", false
}

// literalString reads '...'.
func (r *fastReader) literalString() (string, bool) {
	r.i++
	start := r.i
	for r.i < len(r.s) {
		c := r.s[r.i]
		switch {
		case c == '\'':
			s := r.s[start:r.i]
			r.i++
			return s, true
		case c < 0x20 && c != '\t' || c == 0x7f:
			return "", false
		}
		r.i++
	}
	return "", false
}

// array reads [v, v, ...], across lines, a trailing comma allowed.
func (r *fastReader) array() ([]fval, bool) {
	r.i++
	out := []fval{}
	for {
		if !r.blank() || r.i >= len(r.s) {
			return nil, false
		}
		if r.s[r.i] == ']' {
			r.i++
			return out, true
		}
		v, ok := r.value(r.line)
		if !ok {
			return nil, false
		}
		out = append(out, v)
		if !r.blank() || r.i >= len(r.s) {
			return nil, false
		}
		switch r.s[r.i] {
		case ',':
			r.i++
		case ']':
			r.i++
			return out, true
		default:
			return nil, false
		}
	}
}

// inlineTable reads { k = v, ... } on one line, without a trailing comma.
func (r *fastReader) inlineTable(line int) (*ftable, bool) {
	r.i++
	t := r.table(ftable{line: line})
	r.spaces()
	if r.i < len(r.s) && r.s[r.i] == '}' {
		r.i++
		t.closed = true
		return t, true
	}
	// Dotted keys inside make tables of this one: a section of their own.
	r.section++
	for {
		if !r.keyValue(t) {
			return nil, false
		}
		r.spaces()
		if r.i >= len(r.s) {
			return nil, false
		}
		switch r.s[r.i] {
		case ',':
			r.i++
			r.spaces()
		case '}':
			r.i++
			closeAll(t)
			return t, true
		default:
			return nil, false
		}
	}
}

// closeAll closes an inline table and the tables its dotted keys made.
func closeAll(t *ftable) {
	t.closed = true
	for _, e := range t.ents {
		if e.val.kind == fTable && !e.val.t.closed {
			closeAll(e.val.t)
		}
	}
}
