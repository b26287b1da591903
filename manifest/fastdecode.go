package manifest

import (
	"bytes"
	"encoding/binary"
	"math/bits"
	"strconv"
	"time"
	"unicode/utf8"
)

// decodeFast reads a manifest in one pass when the JSON keeps to the shape
// Encode writes: every key spelt exactly as the struct tags spell it and at
// most once, no nulls, integers without fractions or exponents, strings whose
// only escapes are \" \\ \/ \b \f \n \r \t and \u of a non-surrogate, and
// nothing after the object. On anything else it gives up (ok false) and
// Decode reads the text with encoding/json, which also words every error.
// FuzzDecodeFastMatchesJSON holds it to encoding/json's reading.
//
// A manifest of 1,000 entries is 600 KB of JSON; encoding/json (which scans
// the text twice and matches keys case-insensitively) took half of the time
// of `readproof manifest` and `diff`.
func decodeFast(data []byte) (m *Manifest, ok bool) {
	return decodeFastSplit(data, splitAt)
}

// splitAt is the size of entries text from which decodeFast reads the second
// half of the entries on a goroutine of its own: a 1,000-entry manifest
// (600 KB) is split, a handful of entries is not worth a goroutine.
const splitAt = 128 << 10

// decodeFastSplit is decodeFast that splits the entries when at least
// minSplit bytes of text follow their opening bracket (tests pass 0 to
// split whatever can be split).
func decodeFastSplit(data []byte, minSplit int) (m *Manifest, ok bool) {
	d := &fastJSON{b: data}
	m = &Manifest{}
	ok = d.fields(func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "format":
			bit, ok = 1, d.str(&m.Format)
		case "run_id":
			bit, ok = 2, d.str(&m.RunID)
		case "started_at":
			bit, ok = 4, d.time(&m.StartedAt)
		case "created_at":
			bit, ok = 8, d.time(&m.CreatedAt)
		case "caller":
			bit, ok = 16, d.str(&m.Caller)
		case "trace_id":
			bit, ok = 32, d.str(&m.TraceID)
		case "entries":
			bit, ok = 64, d.entries(&m.Entries, minSplit)
		}
		return
	})
	if !ok || !d.end() {
		return nil, false
	}
	return m, true
}

// entries reads the entries array into *dst (never nil, as encoding/json
// reads []).
//
// With at least minSplit bytes after the bracket it looks, from the middle
// of the rest of the text on, for a place where one entry may end and the
// next begin (a newline, then "}", "," and "{" with only whitespace between:
// a newline is never inside a string the reader accepts) and reads from that
// comma on (rest) on a goroutine while it reads up to it here. When the
// entry read here ends exactly at that "}", what the goroutine read is what
// reading on would have read, since reading from a position does not depend
// on what came before; otherwise (the brace closed something else, or the
// entries ended first) its work is dropped and reading goes on here.
func (d *fastJSON) entries(dst *[]Entry, minSplit int) bool {
	*dst = make([]Entry, 0, 1)
	if !d.byte('[') {
		return false
	}
	if d.byte(']') {
		return true
	}
	// The entries' strings are cut from a copy of their text made once
	// (each half copies its own, side by side: at 10,000 entries the copy
	// of 6 MB took a tenth of `readproof manifest`).
	brace := -1
	var rest chan fastTail
	if len(d.b)-d.i >= minSplit {
		if brace = d.splitBrace(); brace >= 0 {
			rest = make(chan fastTail, 1)
			go func() { rest <- d.tail(brace + 1) }()
		}
	}
	if brace >= 0 {
		d.text(d.i, brace+1)
	} else {
		d.text(d.i, len(d.b))
	}
	drop := func() {
		if rest != nil {
			<-rest
		}
	}
	first := d.i
	for {
		if len(*dst) == 1 {
			d.room(dst, first)
		}
		*dst = append(*dst, Entry{})
		if !d.entry(&(*dst)[len(*dst)-1]) {
			drop()
			return false
		}
		if rest != nil && d.i == brace+1 {
			t := <-rest
			if !t.ok {
				return false
			}
			*dst = append(*dst, t.entries...)
			d.i = t.end
			return true
		}
		if d.byte(',') {
			continue
		}
		drop()
		return d.byte(']')
	}
}

// room makes room, once one entry (from first to d.i) is read, for as many
// as the rest of the text holds at that size, and an eighth more (a wrong
// guess only costs growth or spare room): growing by doubling copied and
// faulted in twice the bytes, and counting the entries first cost a tenth
// of the decoding.
func (d *fastJSON) room(dst *[]Entry, first int) {
	if per := d.i - first; per > 0 {
		n := (len(d.b) - d.i) / per
		*dst = append(make([]Entry, 0, len(*dst)+n+n/8+16), *dst...)
	}
}

// fastTail is what tail read.
type fastTail struct {
	entries []Entry
	end     int // just after the closing bracket
	ok      bool
}

// tail reads, from i on, what follows an entry: "," and entries up to the
// closing bracket, with a reader of its own.
func (d *fastJSON) tail(i int) fastTail {
	t := &fastJSON{b: d.b, i: i}
	t.text(i, len(t.b))
	if !t.byte(',') {
		return fastTail{}
	}
	t.space()
	first := t.i
	es := make([]Entry, 0, 1)
	for {
		if len(es) == 1 {
			t.room(&es, first)
		}
		es = append(es, Entry{})
		if !t.entry(&es[len(es)-1]) {
			return fastTail{}
		}
		if t.byte(',') {
			continue
		}
		if !t.byte(']') {
			return fastTail{}
		}
		return fastTail{entries: es, end: t.i, ok: true}
	}
}

// splitBrace finds, in the second half of the text after d.i, a "}" that
// follows a newline and precedes "," and "{", with only whitespace between
// them; -1 if there is none.
func (d *fastJSON) splitBrace() int {
	b := d.b
	skip := func(k int) int {
		for k < len(b) && (b[k] == ' ' || b[k] == '\t' || b[k] == '\n' || b[k] == '\r') {
			k++
		}
		return k
	}
	for i := d.i + (len(b)-d.i)/2; i < len(b); {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j + 1
		k := skip(i)
		if k >= len(b) || b[k] != '}' {
			continue
		}
		brace := k
		k = skip(k + 1)
		if k >= len(b) || b[k] != ',' {
			continue
		}
		k = skip(k + 1)
		if k < len(b) && b[k] == '{' {
			return brace
		}
	}
	return -1
}

func (d *fastJSON) entry(e *Entry) bool {
	return d.fields(func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "position":
			var n int64
			bit, ok = 1, d.int(&n, strconv.IntSize)
			e.Position = int(n)
		case "uri":
			bit, ok = 2, d.str(&e.URI)
		case "ref":
			bit, ok = 4, d.str(&e.Ref)
		case "snapshot":
			bit, ok = 8, d.str(&e.Snapshot)
		case "content_hash":
			bit, ok = 16, d.str(&e.ContentHash)
		case "source_revision":
			bit, ok = 32, d.str(&e.SourceRevision)
		case "observed_at":
			bit, ok = 64, d.time(&e.ObservedAt)
		case "decision":
			bit, ok = 128, d.str(&e.Decision)
		case "bytes":
			bit, ok = 256, d.int(&e.Bytes, 64)
		case "content_type":
			bit, ok = 512, d.str(&e.ContentType)
		case "file":
			bit, ok = 1024, d.str(&e.File)
		case "provenance":
			bit = 2048
			// Sized as the last entry's was (its keys are usually this
			// one's); a repeated key shows as a map that did not grow
			// (and the whole reading is given up, map and all).
			e.Provenance = make(map[string]string, d.provenance)
			ok = d.object(func(key []byte) bool {
				k := d.intern(key)
				var v string
				if !d.str(&v) {
					return false
				}
				n := len(e.Provenance)
				e.Provenance[k] = v
				return len(e.Provenance) > n
			})
			d.provenance = len(e.Provenance)
		case "probe":
			bit = 4096
			e.Probe = &Probe{}
			ok = d.probe(e.Probe)
		}
		return
	})
}

func (d *fastJSON) probe(p *Probe) bool {
	return d.fields(func(key []byte) (bit uint, ok bool) {
		switch string(key) {
		case "bucket":
			bit, ok = 1, d.int(&p.Bucket, 64)
		case "length":
			var n int64
			bit, ok = 2, d.int(&n, strconv.IntSize)
			p.Length = int(n)
		case "delivered_hash":
			bit, ok = 4, d.str(&p.DeliveredHash)
		case "delivered_bytes":
			bit, ok = 8, d.int(&p.DeliveredSize, 64)
		case "session":
			bit, ok = 16, d.str(&p.Session)
		}
		return
	})
}

// fastJSON is the reader decodeFast uses.
type fastJSON struct {
	b []byte
	// s is b[base:base+len(s)] as a string: values without escapes in
	// that range are cut from it, others are copied.
	s    string
	base int
	i    int
	buf  []byte // unescaped string bytes, reused
	// keys holds the provenance keys read so far: every entry has the
	// same few, and each is then one string instead of one per entry.
	keys map[string]string
	// provenance is the number of keys of the last provenance read.
	provenance int
}

// text makes the string values read from b[lo:hi] on substrings of one
// copy of that text.
func (d *fastJSON) text(lo, hi int) {
	d.s, d.base = string(d.b[lo:hi]), lo
}

// intern returns key as a string, the same string for the same bytes.
func (d *fastJSON) intern(key []byte) string {
	if k, ok := d.keys[string(key)]; ok {
		return k
	}
	if d.keys == nil {
		d.keys = map[string]string{}
	}
	k := string(key)
	d.keys[k] = k
	return k
}

func (d *fastJSON) space() {
	for d.i < len(d.b) && d.b[d.i] <= ' ' {
		switch d.b[d.i] {
		case '\n':
			d.i++
			// The indentation after a newline, up to eight spaces at a
			// time: the lowest byte of w that is not a space ends it.
			if d.i+8 <= len(d.b) {
				const spaces = 0x2020202020202020
				w := binary.LittleEndian.Uint64(d.b[d.i:]) ^ spaces
				if w == 0 {
					d.i += 8
				} else {
					d.i += bits.TrailingZeros64(w) >> 3
				}
			}
		case ' ', '\t', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastJSON) byte(c byte) bool {
	d.space()
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// end accepts trailing whitespace only.
func (d *fastJSON) end() bool {
	d.space()
	return d.i == len(d.b)
}

// object reads {"key": value, ...}, calling field with each key (valid
// until the next string is read) to read the value.
func (d *fastJSON) object(field func(key []byte) bool) bool {
	if !d.byte('{') {
		return false
	}
	if d.byte('}') {
		return true
	}
	for {
		d.space()
		key, ok := d.raw()
		if !ok || !d.byte(':') || !field(key) {
			return false
		}
		if d.byte(',') {
			continue
		}
		return d.byte('}')
	}
}

// fields is object for a struct: field reads the value of key and names
// its bit (0 with ok false for a key the struct lacks); a key read twice
// gives up, as encoding/json would merge the two.
func (d *fastJSON) fields(field func(key []byte) (bit uint, ok bool)) bool {
	var seen uint
	return d.object(func(key []byte) bool {
		bit, ok := field(key)
		if !ok || seen&bit != 0 {
			return false
		}
		seen |= bit
		return true
	})
}

// raw reads a string at d.i and returns its unescaped bytes.
func (d *fastJSON) raw() ([]byte, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, false
	}
	d.i++
	start := d.i
	for {
		d.plain()
		if d.i >= len(d.b) {
			return nil, false
		}
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, true
		case c == '\\':
			return d.escaped(start)
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false // encoding/json would replace it
			}
			d.i += n
		default:
			d.i++
		}
	}
}

// plain skips the string bytes at d.i that need no attention: printable
// ASCII other than '"' and '\\', eight at a time. It stops at the first
// other byte, or up to seven bytes before the end of the text, which raw
// then reads one at a time.
func (d *fastJSON) plain() {
	const (
		ones  = 0x0101010101010101
		highs = 0x8080808080808080
	)
	for d.i+8 <= len(d.b) {
		w := binary.LittleEndian.Uint64(d.b[d.i:])
		q := w ^ (ones * '"')  // a zero byte where w has '"'
		e := w ^ (ones * '\\') // ... and where it has '\\'
		// A high bit for each byte that is zero in q or e, below 0x20 or
		// at least 0x80 in w. Borrows only add high bits above a byte
		// that has one already, so the lowest is the first such byte.
		if t := ((q-ones)&^q | (e-ones)&^e | (w - ones*0x20) | w) & highs; t != 0 {
			d.i += bits.TrailingZeros64(t) >> 3
			return
		}
		d.i += 8
	}
}

// escaped continues raw from the first backslash.
func (d *fastJSON) escaped(start int) ([]byte, bool) {
	b := append(d.buf[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			d.buf = b
			return b, true
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return nil, false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				b = append(b, e)
			case 'b':
				b = append(b, '\b')
			case 'f':
				b = append(b, '\f')
			case 'n':
				b = append(b, '\n')
			case 'r':
				b = append(b, '\r')
			case 't':
				b = append(b, '\t')
			case 'u':
				if d.i+4 > len(d.b) {
					return nil, false
				}
				var r rune
				for _, h := range d.b[d.i : d.i+4] {
					switch {
					case h >= '0' && h <= '9':
						r = r<<4 | rune(h-'0')
					case h >= 'a' && h <= 'f':
						r = r<<4 | rune(h-'a'+10)
					case h >= 'A' && h <= 'F':
						r = r<<4 | rune(h-'A'+10)
					default:
						return nil, false
					}
				}
				if r >= 0xd800 && r < 0xe000 {
					return nil, false // surrogates: left to encoding/json
				}
				b = utf8.AppendRune(b, r)
				d.i += 4
			default:
				return nil, false
			}
		case c < 0x20:
			return nil, false
		case c >= utf8.RuneSelf:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				return nil, false
			}
			b = append(b, d.b[d.i:d.i+n]...)
			d.i += n
		default:
			b = append(b, c)
			d.i++
		}
	}
	return nil, false
}

func (d *fastJSON) str(dst *string) bool {
	d.space()
	start := d.i
	s, ok := d.raw()
	if ok && d.i-start == len(s)+2 {
		if lo, hi := start+1-d.base, d.i-1-d.base; lo >= 0 && hi <= len(d.s) {
			*dst = d.s[lo:hi] // no escapes: no copy
		} else {
			*dst = string(s)
		}
	} else {
		*dst = string(s)
	}
	return ok
}

// time reads a time the way time.Time's UnmarshalJSON does, from the
// quoted text itself.
func (d *fastJSON) time(dst *time.Time) bool {
	d.space()
	start := d.i
	s, ok := d.raw()
	if !ok || d.i-start != len(s)+2 {
		return false // escaped: left to encoding/json
	}
	return dst.UnmarshalJSON(d.b[start:d.i]) == nil
}

// int reads an integer of the given bit size: JSON's grammar without a
// fraction or exponent.
func (d *fastJSON) int(dst *int64, bits int) bool {
	d.space()
	start := d.i
	if d.i < len(d.b) && d.b[d.i] == '-' {
		d.i++
	}
	digits := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == digits || d.b[digits] == '0' && d.i-digits > 1 {
		return false
	}
	if d.i < len(d.b) {
		switch d.b[d.i] {
		case '.', 'e', 'E':
			return false
		}
	}
	// Up to 9 digits fit any size we read, up to 18 an int64: no overflow.
	if d.i-digits <= 9 || bits == 64 && d.i-digits <= 18 {
		var n int64
		for _, c := range d.b[digits:d.i] {
			n = n*10 + int64(c-'0')
		}
		if d.b[start] == '-' {
			n = -n
		}
		*dst = n
		return true
	}
	n, err := strconv.ParseInt(string(d.b[start:d.i]), 10, bits)
	*dst = n
	return err == nil
}
