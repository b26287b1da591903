package evidence

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// decodeDocument decodes a bundle (a statement, or with envelope a DSSE
// envelope or a statement) exactly as json.Unmarshal into document (or
// *Statement) does. The bundles Verify reads are tens of megabytes of base64
// and encoding/json spent most of verify's time validating and unquoting
// them; a hand-written decoder for the one shape we write takes a fraction.
//
// It decodes only a strict subset of JSON: the format's own member names
// spelled exactly, each at most once per object; strings without escapes
// (valid UTF-8, no control characters); integers that fit; no null where a
// field of the format is expected. Anything else (an escape, an unknown or
// repeated member, a syntax error, a type mismatch) makes it give up, and the
// caller decodes with encoding/json, which then accepts or refuses the input
// with its own error. So whenever decodeDocument returns ok, json.Unmarshal
// accepts the same input and yields the same value (TestFastDecodeMatchesJSON
// and FuzzFastDecode hold it to that), and the verifier's strictness and its
// parse errors are those of encoding/json. The one difference is where the
// base64 text goes, most of a bundle's bytes (a copy beside them doubled
// verify's live heap): it is left in data. An entry's content_b64 is in its
// b64, an envelope's payload in payloadB64, slices of data, not copies
// (ContentB64 and *Payload stay empty).
//
// It tells x (when not nil) of each entry once it is decoded and of the
// manifest id, for the work that can start before the rest is read.
func decodeDocument(data []byte, doc *document, envelope bool, x *early) bool {
	d := fastDecoder{data: data, early: x}
	if !d.document(doc, envelope) {
		return false
	}
	d.ws()
	return d.i == len(d.data)
}

// decodeStatement is decodeDocument for a statement alone (an envelope's
// payload): envelope members are unknown members there.
func decodeStatement(data []byte, st *Statement, x *early) bool {
	var doc document
	if !decodeDocument(data, &doc, false, x) {
		return false
	}
	*st = doc.Statement
	return true
}

// maxFastDepth bounds nesting in the fast decoder (encoding/json allows
// 10,000 levels; deeper documents go to it).
const maxFastDepth = 200

type fastDecoder struct {
	data  []byte
	i     int
	depth int
	early *early // hears of decoded entries and the manifest id; may be nil
}

func (d *fastDecoder) ws() {
	for d.i < len(d.data) {
		switch d.data[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) peek() byte {
	if d.i < len(d.data) {
		return d.data[d.i]
	}
	return 0
}

// object decodes an object, calling member with each key (a plain string,
// see strBytes) with d.i at the start of its value; member must consume the
// value. Whitespace is skipped around everything.
func (d *fastDecoder) object(member func(key []byte) bool) bool {
	d.ws()
	if d.peek() != '{' {
		return false
	}
	d.i++
	if d.depth++; d.depth > maxFastDepth {
		return false
	}
	d.ws()
	if d.peek() == '}' {
		d.i++
		d.depth--
		return true
	}
	for {
		d.ws()
		key, ok := d.strBytes()
		if !ok {
			return false
		}
		d.ws()
		if d.peek() != ':' {
			return false
		}
		d.i++
		d.ws()
		if !member(key) {
			return false
		}
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case '}':
			d.i++
			d.depth--
			return true
		default:
			return false
		}
	}
}

// array decodes an array, calling elem with d.i at the start of each
// element; elem must consume it. It reports the number of elements.
func (d *fastDecoder) array(elem func() bool) (int, bool) {
	d.ws()
	if d.peek() != '[' {
		return 0, false
	}
	d.i++
	if d.depth++; d.depth > maxFastDepth {
		return 0, false
	}
	d.ws()
	if d.peek() == ']' {
		d.i++
		d.depth--
		return 0, true
	}
	n := 0
	for {
		d.ws()
		if !elem() {
			return 0, false
		}
		n++
		d.ws()
		switch d.peek() {
		case ',':
			d.i++
		case ']':
			d.i++
			d.depth--
			return n, true
		default:
			return 0, false
		}
	}
}

// once marks member bit in *seen and reports whether it was not yet set: a
// repeated member of a struct makes the decoder give up (encoding/json
// would merge the two).
func once(seen *uint32, bit uint) bool {
	if *seen&(1<<bit) != 0 {
		return false
	}
	*seen |= 1 << bit
	return true
}

// strBytes returns the contents of a plain string at d.i, a slice of the
// input: no backslash, no byte below 0x20, valid UTF-8. Such a string is its
// own decoded value in encoding/json.
func (d *fastDecoder) strBytes() ([]byte, bool) {
	if d.peek() != '"' {
		return nil, false
	}
	start := d.i + 1
	n := bytes.IndexByte(d.data[start:], '"')
	if n < 0 {
		return nil, false
	}
	s := d.data[start : start+n]
	if !plainString(s) {
		return nil, false
	}
	d.i = start + n + 1
	return s, true
}

func (d *fastDecoder) str(out *string) bool {
	s, ok := d.strBytes()
	if ok {
		*out = string(s)
	}
	return ok
}

const (
	lows  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainString reports whether s holds no backslash, no control character
// (below 0x20) and only valid UTF-8, eight bytes at a time while it is
// ASCII.
func plainString(s []byte) bool {
	i := 0
	for ; i+8 <= len(s); i += 8 {
		w := binary.LittleEndian.Uint64(s[i:])
		if w&highs != 0 {
			break // non-ASCII: the byte loop below
		}
		// some byte < 0x20, or some byte == '\\' (exact tests for words
		// without high bits)
		if (w-0x20*lows)&^w&highs != 0 {
			return false
		}
		if x := w ^ ('\\' * lows); (x-lows)&^x&highs != 0 {
			return false
		}
	}
	ascii := true
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '\\' {
			return false
		}
		if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	return ascii || utf8.Valid(s)
}

// integer decodes an integer literal that fits an int64 with at most 18
// digits: what encoding/json decodes into an int field without error.
// Fractions and exponents make it give up (encoding/json refuses them for
// an integer field).
func (d *fastDecoder) integer() (int64, bool) {
	start := d.i
	if d.peek() == '-' {
		d.i++
	}
	digits := d.i
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
		}
	default:
		return 0, false
	}
	if d.i-digits > 18 {
		return 0, false
	}
	switch c := d.peek(); {
	case c == '.' || c == 'e' || c == 'E' || (c >= '0' && c <= '9'):
		return 0, false
	}
	v, err := strconv.ParseInt(string(d.data[start:d.i]), 10, 64)
	return v, err == nil
}

func (d *fastDecoder) int(out *int) bool {
	v, ok := d.integer()
	if !ok || int64(int(v)) != v {
		return false
	}
	*out = int(v)
	return true
}

func (d *fastDecoder) int64(out *int64) bool {
	v, ok := d.integer()
	if ok {
		*out = v
	}
	return ok
}

func (d *fastDecoder) literal(word string) bool {
	if !bytes.HasPrefix(d.data[d.i:], []byte(word)) {
		return false
	}
	d.i += len(word)
	return true
}

func (d *fastDecoder) bool(out *bool) bool {
	switch d.peek() {
	case 't':
		*out = true
		return d.literal("true")
	case 'f':
		*out = false
		return d.literal("false")
	}
	return false
}

// number validates a JSON number at d.i and returns its text.
func (d *fastDecoder) number() ([]byte, bool) {
	start := d.i
	if d.peek() == '-' {
		d.i++
	}
	digitsFrom := func() bool {
		from := d.i
		for d.i < len(d.data) && d.data[d.i] >= '0' && d.data[d.i] <= '9' {
			d.i++
		}
		return d.i > from
	}
	switch c := d.peek(); {
	case c == '0':
		d.i++
	case c >= '1' && c <= '9':
		digitsFrom()
	default:
		return nil, false
	}
	if d.peek() == '.' {
		d.i++
		if !digitsFrom() {
			return nil, false
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.i++
		if c := d.peek(); c == '+' || c == '-' {
			d.i++
		}
		if !digitsFrom() {
			return nil, false
		}
	}
	return d.data[start:d.i], true
}

// anyValue decodes a value as encoding/json decodes into an empty
// interface: objects as map[string]any (a repeated key gives up: Verify
// refuses it, see ambiguousMember),
// arrays as []any, numbers as float64, null as nil.
func (d *fastDecoder) anyValue() (any, bool) {
	switch c := d.peek(); c {
	case '"':
		s, ok := d.strBytes()
		return string(s), ok
	case '{':
		m := map[string]any{}
		ok := d.object(func(key []byte) bool {
			if _, dup := m[string(key)]; dup {
				return false // encoding/json keeps the last; Verify refuses it
			}
			v, ok := d.anyValue()
			m[string(key)] = v
			return ok
		})
		return m, ok
	case '[':
		a := make([]any, 0)
		_, ok := d.array(func() bool {
			v, ok := d.anyValue()
			a = append(a, v)
			return ok
		})
		return a, ok
	case 't', 'f':
		var b bool
		ok := d.bool(&b)
		return b, ok
	case 'n':
		return nil, d.literal("null")
	default:
		num, ok := d.number()
		if !ok {
			return nil, false
		}
		f, err := strconv.ParseFloat(string(num), 64)
		return f, err == nil
	}
}

// anyMap decodes an object into a map[string]any as encoding/json decodes
// into a map-typed field.
func (d *fastDecoder) anyMap(out *map[string]any) bool {
	m := map[string]any{}
	ok := d.object(func(key []byte) bool {
		if _, dup := m[string(key)]; dup {
			return false
		}
		v, ok := d.anyValue()
		m[string(key)] = v
		return ok
	})
	*out = m
	return ok
}

// skipValue validates any value (strings may hold escapes, and any bytes
// from 0x20 up, as encoding/json's scanner allows) and returns its text.
func (d *fastDecoder) skipValue() ([]byte, bool) {
	start := d.i
	ok := false
	switch c := d.peek(); c {
	case '"':
		ok = d.skipString()
	case '{':
		// (a key must be a plain string: an escaped key gives up)
		ok = d.object(func([]byte) bool { _, ok := d.skipValue(); return ok })
	case '[':
		_, ok = d.array(func() bool { _, ok := d.skipValue(); return ok })
	case 't':
		ok = d.literal("true")
	case 'f':
		ok = d.literal("false")
	case 'n':
		ok = d.literal("null")
	default:
		_, ok = d.number()
	}
	return d.data[start:d.i], ok
}

func (d *fastDecoder) skipString() bool {
	if d.peek() != '"' {
		return false
	}
	d.i++
	for d.i < len(d.data) {
		c := d.data[d.i]
		switch {
		case c == '"':
			d.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			d.i++
			switch d.peek() {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i++
			case 'u':
				d.i++
				for k := 0; k < 4; k++ {
					switch c := d.peek(); {
					case c >= '0' && c <= '9', c >= 'a' && c <= 'f', c >= 'A' && c <= 'F':
						d.i++
					default:
						return false
					}
				}
			default:
				return false
			}
		default:
			d.i++
		}
	}
	return false
}

// raw decodes a value into a json.RawMessage: a copy of its text. null
// makes it give up (encoding/json hands "null" to RawMessage's
// UnmarshalJSON, an edge not worth copying here).
func (d *fastDecoder) raw(out *json.RawMessage) bool {
	if d.peek() == 'n' {
		return false
	}
	v, ok := d.skipValue()
	if ok && ambiguousMember(v, nil) != nil {
		return false // a repeated member: Verify refuses it
	}
	if ok {
		*out = append(json.RawMessage(nil), v...)
	}
	return ok
}

func (d *fastDecoder) document(doc *document, envelope bool) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "_type":
			return once(&seen, 0) && d.str(&doc.Type)
		case "subject":
			if !once(&seen, 1) {
				return false
			}
			doc.Subject = make([]Subject, 0, 1)
			_, ok := d.array(func() bool {
				var s Subject
				ok := d.subject(&s)
				doc.Subject = append(doc.Subject, s)
				return ok
			})
			return ok
		case "predicateType":
			return once(&seen, 2) && d.str(&doc.PredicateType)
		case "predicate":
			return once(&seen, 3) && d.predicate(&doc.Predicate)
		}
		if !envelope {
			return false
		}
		switch string(key) {
		case "payload":
			// its text stays in data, like content_b64's
			doc.Payload = new(string)
			if !once(&seen, 4) {
				return false
			}
			s, ok := d.strBytes()
			doc.payloadB64 = s
			return ok
		case "payloadType":
			doc.PayloadType = new(string)
			return once(&seen, 5) && d.str(doc.PayloadType)
		case "signatures":
			if !once(&seen, 6) {
				return false
			}
			doc.Signatures = make([]EnvelopeSignature, 0, 1)
			_, ok := d.array(func() bool {
				var s EnvelopeSignature
				var seen uint32
				ok := d.object(func(key []byte) bool {
					switch string(key) {
					case "keyid":
						return once(&seen, 0) && d.str(&s.KeyID)
					case "sig":
						return once(&seen, 1) && d.str(&s.Sig)
					}
					return false
				})
				doc.Signatures = append(doc.Signatures, s)
				return ok
			})
			return ok
		}
		return false
	})
}

func (d *fastDecoder) subject(s *Subject) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "name":
			return once(&seen, 0) && d.str(&s.Name)
		case "digest":
			if !once(&seen, 1) {
				return false
			}
			m := map[string]string{}
			s.Digest = m
			return d.object(func(key []byte) bool {
				if _, dup := m[string(key)]; dup {
					return false
				}
				var v string
				ok := d.str(&v)
				m[string(key)] = v
				return ok
			})
		}
		return false
	})
}

func (d *fastDecoder) predicate(p *Predicate) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "run_id":
			return once(&seen, 0) && d.str(&p.RunID)
		case "manifest_id":
			if !once(&seen, 1) || !d.str(&p.ManifestID) {
				return false
			}
			if d.early != nil {
				d.early.manifestID(p.ManifestID)
			}
			return true
		case "manifest_created_at":
			return once(&seen, 2) && d.str(&p.ManifestCreatedAt)
		case "generated_at":
			return once(&seen, 3) && d.str(&p.GeneratedAt)
		case "exporter":
			if !once(&seen, 4) {
				return false
			}
			var seen uint32
			return d.object(func(key []byte) bool {
				switch string(key) {
				case "name":
					return once(&seen, 0) && d.str(&p.Exporter.Name)
				case "version":
					return once(&seen, 1) && d.str(&p.Exporter.Version)
				}
				return false
			})
		case "merkle":
			return once(&seen, 5) && d.merkle(&p.Merkle)
		case "entries":
			if !once(&seen, 6) {
				return false
			}
			p.Entries = make([]BundleEntry, 0, d.countHint(p.Merkle.LeafCount))
			_, ok := d.array(func() bool {
				p.Entries = append(p.Entries, BundleEntry{})
				i := len(p.Entries) - 1
				if !d.entry(&p.Entries[i]) {
					return false
				}
				if d.early != nil {
					d.early.entry(i, &p.Entries[i])
				}
				return true
			})
			return ok
		case "resources":
			if !once(&seen, 7) {
				return false
			}
			p.Resources = make([]BundleResource, 0)
			_, ok := d.array(func() bool {
				p.Resources = append(p.Resources, BundleResource{})
				return d.resource(&p.Resources[len(p.Resources)-1])
			})
			return ok
		case "replay":
			if !once(&seen, 8) {
				return false
			}
			p.Replay = &BundleReplay{}
			return d.replay(p.Replay)
		case "git":
			if !once(&seen, 9) {
				return false
			}
			p.Git = &GitInfo{}
			return d.git(p.Git)
		case "proof_of_read":
			return once(&seen, 10) && d.raw(&p.ProofOfRead)
		case "receipts":
			return once(&seen, 11) && d.raw(&p.Receipts)
		}
		return false
	})
}

// countHint is a capacity for the entries array: the leaf count the merkle
// block declared when it came first (as we write it), bounded by what the
// input could hold, else 0.
func (d *fastDecoder) countHint(leafCount *int) int {
	if leafCount == nil || *leafCount <= 0 {
		return 0
	}
	return min(*leafCount, (len(d.data)-d.i)/64)
}

func (d *fastDecoder) merkle(m *Merkle) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "algorithm":
			return once(&seen, 0) && d.str(&m.Algorithm)
		case "leaf":
			return once(&seen, 1) && d.str(&m.Leaf)
		case "root":
			return once(&seen, 2) && d.str(&m.Root)
		case "leaf_count":
			m.LeafCount = new(int)
			return once(&seen, 3) && d.int(m.LeafCount)
		}
		return false
	})
}

func (d *fastDecoder) entry(e *BundleEntry) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "position":
			return once(&seen, 0) && d.int(&e.Position)
		case "uri":
			return once(&seen, 1) && d.str(&e.URI)
		case "snapshot_id":
			return once(&seen, 2) && d.str(&e.SnapshotID)
		case "materialization_id":
			return once(&seen, 3) && d.str(&e.MaterializationID)
		case "content_hash":
			return once(&seen, 4) && d.str(&e.ContentHash)
		case "source_revision":
			return once(&seen, 5) && d.str(&e.SourceRevision)
		case "observed_at":
			return once(&seen, 6) && d.str(&e.ObservedAt)
		case "content_type":
			return once(&seen, 7) && d.str(&e.ContentType)
		case "bytes":
			return once(&seen, 8) && d.int64(&e.Bytes)
		case "provenance":
			return once(&seen, 9) && d.anyMap(&e.Provenance)
		case "content_b64":
			if !once(&seen, 10) {
				return false
			}
			s, ok := d.strBytes()
			if ok && len(s) > 0 {
				e.b64 = s // a slice of the input: see decodeDocument
			}
			return ok
		case "ref":
			return once(&seen, 11) && d.str(&e.Ref)
		}
		return false
	})
}

func (d *fastDecoder) resource(r *BundleResource) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "uri":
			return once(&seen, 0) && d.str(&r.URI)
		case "namespace":
			return once(&seen, 1) && d.str(&r.Namespace)
		case "path":
			return once(&seen, 2) && d.str(&r.Path)
		case "source":
			if !once(&seen, 3) {
				return false
			}
			r.Source = &BundleSource{}
			var seen uint32
			return d.object(func(key []byte) bool {
				switch string(key) {
				case "kind":
					return once(&seen, 0) && d.str(&r.Source.Kind)
				case "config":
					return once(&seen, 1) && d.anyMap(&r.Source.Config)
				}
				return false
			})
		case "policy":
			if !once(&seen, 4) {
				return false
			}
			r.Policy = &BundlePolicy{}
			var seen uint32
			return d.object(func(key []byte) bool {
				switch string(key) {
				case "strategy":
					return once(&seen, 0) && d.str(&r.Policy.Strategy)
				case "max_age_seconds":
					return once(&seen, 1) && d.int64(&r.Policy.MaxAgeSeconds)
				}
				return false
			})
		case "missing":
			return once(&seen, 5) && d.bool(&r.Missing)
		}
		return false
	})
}

func (d *fastDecoder) replay(r *BundleReplay) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		switch string(key) {
		case "verified_at":
			return once(&seen, 0) && d.str(&r.VerifiedAt)
		case "all_match":
			return once(&seen, 1) && d.bool(&r.AllMatch)
		case "entries":
			if !once(&seen, 2) {
				return false
			}
			r.Entries = make([]BundleReplayEntry, 0)
			_, ok := d.array(func() bool {
				r.Entries = append(r.Entries, BundleReplayEntry{})
				e := &r.Entries[len(r.Entries)-1]
				var seen uint32
				return d.object(func(key []byte) bool {
					switch string(key) {
					case "position":
						return once(&seen, 0) && d.int(&e.Position)
					case "match":
						return once(&seen, 1) && d.bool(&e.Match)
					case "expected_hash":
						return once(&seen, 2) && d.str(&e.ExpectedHash)
					case "actual_hash":
						return once(&seen, 3) && d.str(&e.ActualHash)
					case "error":
						return once(&seen, 4) && d.str(&e.Error)
					}
					return false
				})
			})
			return ok
		case "error":
			return once(&seen, 3) && d.str(&r.Error)
		}
		return false
	})
}

func (d *fastDecoder) git(g *GitInfo) bool {
	var seen uint32
	return d.object(func(key []byte) bool {
		var field *string
		var bit uint
		switch string(key) {
		case "manifest_commit":
			field, bit = &g.ManifestCommit, 0
		case "tree":
			field, bit = &g.Tree, 1
		case "run_ref":
			field, bit = &g.RunRef, 2
		case "manifest_sha256":
			field, bit = &g.ManifestSHA256, 3
		case "commit_signer":
			field, bit = &g.CommitSigner, 4
		case "store":
			field, bit = &g.Store, 5
		default:
			return false
		}
		return once(&seen, bit) && d.str(field)
	})
}
