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
	key string
	val fval // val.line is where the key is defined
}

// fval is a value of the tree; kind says which field holds it. (A struct
// rather than an interface: boxing each string was a third of the
// allocations.)
type fval struct {
	s    string
	n    int64
	list *[]fval // fArray: a static array; fTables: [[header]] tables
	t    *ftable // fTable
	// line is where the key holding the value is defined (in a table).
	line int32
	kind fkind // last, with line: 48 bytes a value, 64 a key
}

// elems returns the elements of an array (fArray, fTables).
func (v *fval) elems() []fval {
	if v.list == nil {
		return nil
	}
	return *v.list
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

// set adds key k to t. The keys of every table are cut from one slab
// rather than a slice allocated for each table (a slice a table and its
// growth were a third of a parse's allocations). A table read as a whole
// (a [header]'s, an inline table) is given room for the keys a look ahead
// counts (reserve); one that grows past its room, or was made by dotted
// keys, is given twice the room, and its keys are moved there.
func (r *fastReader) set(t *ftable, k string, v fval, line int) {
	if len(t.ents) == cap(t.ents) {
		n := 2 * cap(t.ents)
		if n == 0 {
			n = firstKeys
		}
		ents := r.ents(n)
		ents = ents[:len(t.ents)]
		copy(ents, t.ents)
		t.ents = ents
	}
	v.line = int32(line)
	t.ents = append(t.ents, fentry{k, v})
}

// ents returns room for n keys from the slab.
func (r *fastReader) ents(n int) []fentry {
	if len(r.entSlab) < n {
		// About a key for every 32 bytes of text, so that a small file
		// is not given a large slab.
		r.entSlab = make([]fentry, max(n, min(len(r.s)/32, keysSlab), 8))
	}
	ents := r.entSlab[:0:n]
	r.entSlab = r.entSlab[n:]
	return ents
}

// reserve gives the new table t room for n keys. Filling a table's
// room exactly spares moving its keys (a copy the garbage collector's
// write barrier made costly); a wrong count only costs room or a move.
func (r *fastReader) reserve(t *ftable, n int) {
	if n > 0 && t.ents == nil {
		t.ents = r.ents(min(n, maxFastKeys))
	}
}

// countSection is the number of lines after the current one, up to the
// next header, that may hold a key: the keys of a [header]'s table, as
// far as a look ahead can tell.
func (r *fastReader) countSection() int {
	s := r.s[r.i:]
	n := 0
	for {
		nl := strings.IndexByte(s, '\n')
		if nl < 0 {
			return n
		}
		s = s[nl+1:]
		j := 0
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j < len(s) {
			switch s[j] {
			case '[':
				return n
			case '#', '\n', '\r':
			default:
				n++
			}
		}
	}
}

// countInline is the number of keys of the inline table starting at r.i
// (after its '{'), as far as a look ahead can tell: the '=' outside
// strings, up to the closing '}', the line's end or the first nested
// bracket (the key holding it is counted, the keys after it are not).
// It does not read past a nested table or array: each nested table reads
// its own, and reading each to the end read a line of nested tables
// once for each of them, the square of its length.
func (r *fastReader) countInline() int {
	s := r.s[r.i:]
	n := 0
	for j := 0; j < len(s); j++ {
		switch s[j] {
		case '\n', '{', '[', '}', ']':
			return n
		case '=':
			n++
		case '"', '\'':
			q := s[j]
			for j++; j < len(s) && s[j] != q && s[j] != '\n'; j++ {
				if q == '"' && s[j] == '\\' {
					j++
				}
			}
		}
	}
	return n
}

// The room set gives a table for its first keys (a [[resource]] with uri,
// policy, max_age and source fits), and the largest slab it cuts from.
const (
	firstKeys = 4
	keysSlab  = 256
)

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
	entSlab []fentry // tables' keys are taken from it (set)
	hint    int      // tablesHint, once counted
	depth   int      // arrays and inline tables open at r.i (value)

	// read, when set, takes each [[resource]] block as the next begins
	// (the blocks before the last can no longer change), and the memory
	// of its tables and keys is then reused for the next: a policy file
	// of 1,000 resources otherwise left a tree of 400 KB, and a process
	// pays a page fault for each new page it touches.
	read *fastResources
	// mark is where the slabs stood when the last block began, and
	// foreign whether a table outside it was made since (its memory is
	// then not reused).
	mark    slabMark
	foreign bool

	// heads, when set, records where the file turns from settings to
	// [[resource]] blocks and back (headRuns).
	heads *[]headRun
}

// headRun is where a run of headers of one kind begins: at the '[' of a
// header whose first key is "resource" ([[resource]], [resource.source],
// ...), or of one whose first key is anything else. The text from one run
// to the next is the run's tables; the text before the first header is the
// root's keys.
type headRun struct {
	at       int
	resource bool
}

// markHead records the header at offset at, of a resource block or not.
func (r *fastReader) markHead(at int, resource bool) {
	if h := *r.heads; len(h) == 0 || h[len(h)-1].resource != resource {
		*r.heads = append(h, headRun{at, resource})
	}
}

type slabMark struct {
	slab []ftable
	ents []fentry
}

// fastResources are the [[resource]] blocks decoded while reading.
type fastResources struct {
	raw []rawResource
	res []Resource
}

// decode appends the resource of table e, as fastDecode reads it. The
// room was made for every block ([[ in the file): the Sources' addresses
// are kept, so the slices must not move.
func (fr *fastResources) decode(e *fval) bool {
	j := len(fr.raw)
	if e.kind != fTable || j == cap(fr.raw) {
		return false
	}
	fr.raw, fr.res = fr.raw[:j+1], fr.res[:j+1]
	return fastResource(&fr.raw[j], &fr.res[j].Source, e.t)
}

// nextResource is called as a [[resource]] block begins: before its
// table is made, with prev the block before it, or after the first's with
// prev nil. The memory reused is what was taken from the slabs since the
// last block began: the tables and keys of that block only, unless a
// header outside it made or extended another table (foreign).
func (r *fastReader) nextResource(prev *fval) bool {
	if r.read == nil {
		return true
	}
	if prev == nil {
		n := r.tablesHint()
		r.read.raw = make([]rawResource, 0, n)
		r.read.res = make([]Resource, 0, n)
	} else {
		if !r.read.decode(prev) {
			return false
		}
		if !r.foreign {
			r.slab, r.entSlab = r.mark.slab, r.mark.ents
		}
	}
	r.mark, r.foreign = slabMark{r.slab, r.entSlab}, false
	return true
}

// tablesHint is the capacity to give the [[resource]] blocks: the number
// of [[ in the file, but no more than a block for every minBlockBytes of
// it (a guess: more blocks than that make decode give up, and the slow
// path read the file). A comment or a string full of "[[" must not make a
// small file allocate a Resource for each.
func (r *fastReader) tablesHint() int {
	if r.hint == 0 {
		r.hint = min(strings.Count(r.s, "[["), len(r.s)/minBlockBytes) + 1
	}
	return r.hint
}

// minBlockBytes is less than the shortest [[resource]] block the checker
// accepts, [[resource]] uri="readproof://a/b" source={type="filesystem",path="p"}
// on three lines (71 bytes).
const minBlockBytes = 64

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
func fastRead(s string) (root *ftable, ok bool) { return readTree(s, nil) }

// readTree is fastRead; with read set, it decodes every [[resource]]
// block but the last into it as it goes, and leaves their tables out of
// the tree it returns (fastDecode decodes the last).
func readTree(s string, read *fastResources) (root *ftable, ok bool) {
	return readTreeHeads(s, read, nil)
}

// readTreeHeads is readTree that also records, when heads is set, where
// the resource blocks begin and end (headRun).
func readTreeHeads(s string, read *fastResources, heads *[]headRun) (root *ftable, ok bool) {
	if !utf8.ValidString(s) {
		return nil, false
	}
	r := &fastReader{s: s, line: 1, read: read, heads: heads}
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
	line, at := r.line, r.i
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
	if names[0] != "resource" {
		r.foreign = true
	}
	if r.heads != nil {
		r.markHead(at, names[0] == "resource")
	}
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
				r.reserve(nt, r.countSection())
				// [[resource]] is given room for the blocks of the file;
				// any other array of tables grows as it is read (room for
				// every block of the file each was the square of its size).
				blocks := t == root && n == "resource"
				room := 1
				if blocks {
					room = r.tablesHint()
				}
				elems := make([]fval, 1, room)
				elems[0] = fval{kind: fTable, t: nt}
				r.set(t, n, fval{kind: fTables, list: &elems}, line)
				// The mark is taken after the root's new key, which may
				// have moved the root's keys into the slab.
				if blocks && !r.nextResource(nil) {
					return nil, false
				}
				return nt, true
			}
			nt := r.table(ftable{explicit: last, line: line})
			if last {
				r.reserve(nt, r.countSection())
			}
			r.set(t, n, fval{kind: fTable, t: nt}, line)
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
				block := t == root && n == "resource" && r.read != nil
				if block && !r.nextResource(&(*fv.list)[len(*fv.list)-1]) {
					return nil, false
				}
				nt := r.table(ftable{explicit: true, line: line})
				if block {
					// Its memory is reused: room for the usual keys is
					// cheaper than counting them.
					r.reserve(nt, firstKeys)
				} else {
					r.reserve(nt, r.countSection())
				}
				*fv.list = append(*fv.list, fval{kind: fTable, t: nt})
				return nt, true
			}
			l := *fv.list
			t = l[len(l)-1].t
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
	for {
		r.spaces()
		k, ok := r.key()
		if !ok {
			return nil, false
		}
		out = append(out, k)
		r.names = out[:0]
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
			r.set(t, n, fval{kind: fTable, t: nt}, line)
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
	r.set(t, k, v, line)
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
	case c == '[' || c == '{':
		// Each nested array or inline table is a call deeper: past
		// maxNesting, which no policy comes near, the reader gives up
		// (and Parse refuses the file, tooDeep) before the stack grows
		// with the file.
		if r.depth++; r.depth > maxNesting {
			return fval{}, false
		}
		if c == '[' {
			v.kind = fArray
			v.list, ok = r.array()
		} else {
			v.kind = fTable
			v.t, ok = r.inlineTable(line)
		}
		r.depth--
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
func (r *fastReader) array() (*[]fval, bool) {
	r.i++
	out := []fval{}
	for {
		if !r.blank() || r.i >= len(r.s) {
			return nil, false
		}
		if r.s[r.i] == ']' {
			r.i++
			return &out, true
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
			return &out, true
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
	r.reserve(t, r.countInline())
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
