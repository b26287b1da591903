// Package strictjson holds readproof's one rule on JSON member names: a
// member a reader reads is named once in its object, and exactly as the
// format spells it. encoding/json matches member names without regard to
// case and keeps the last of repeated members, while jq and Python read
// them otherwise (the first, or the exact name), so bytes that break the
// rule could be authenticated or verified as one value and shown by an
// auditor's tool as another. evidence, receipts, internal/store and
// internal/share (the records a pull takes) check their documents with
// Check before decoding them; TestCheck is the rule's
// one test table.
package strictjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/readproof/readproof/internal/text"
)

// Kind is what is wrong with a member name.
type Kind int

const (
	// Repeated: the object names the member twice.
	Repeated Kind = iota + 1
	// OtherCase: the name is one of the format's names in other case.
	OtherCase
	// Unknown: the format has no member of this name in this object.
	Unknown
)

// Error is a member name Check refuses.
type Error struct {
	Kind Kind
	// Name is the member's name as decoded (escapes resolved).
	Name string
	// Known is, for OtherCase, the format's spelling.
	Known string
}

// maxName bounds a member name quoted in an error.
const maxName = 80

func (e *Error) Error() string {
	name := text.Shorten(e.Name, maxName)
	switch e.Kind {
	case Repeated:
		return fmt.Sprintf("member %q appears twice in one object: JSON readers disagree about which one counts", name)
	case OtherCase:
		return fmt.Sprintf("member %q is not the format's %q: member names are case-sensitive", name, e.Known)
	default:
		return fmt.Sprintf("unknown field %q", name) // names are spelt exactly as the format's documentation spells them
	}
}

// Shape says which members the objects of a JSON value may hold. A nil
// Shape is any JSON: its objects may hold any names, each once.
type Shape interface {
	// Member checks the name of a member of an object of this shape and
	// returns the shape of its value, Opaque, Ignored, or an *Error.
	Member(name string) (Shape, error)
	// Elem returns the shape of the elements of an array of this shape.
	Elem() Shape
}

type special int

func (special) Member(string) (Shape, error) { return nil, nil }
func (special) Elem() Shape                  { return nil }

const (
	// Opaque is the shape of a member whose value is not checked (a
	// scalar of the format, or a value the decoder refuses anyway).
	Opaque special = 1
	// Ignored is the shape of a member the reader skips: neither its value
	// nor a repetition of its name can change what the reader reads.
	Ignored special = 2
)

// MaxDepth: a deeper document is left to encoding/json, which refuses it.
const MaxDepth = 10000

// Check reads the first JSON value of data and returns an *Error when one
// of its objects names a member twice or a member its Shape refuses, and
// first a *TextError when data is not text every reader reads alike (Text:
// invalid UTF-8, a lone surrogate escape, which encoding/json reads as
// U+FFFD and Python refuses). What is not JSON, or deeper than MaxDepth, is
// left to encoding/json, which refuses it: Check returns nil at the first
// syntax error, unless a member before it was refused. What follows the
// first value is not read.
func Check(data []byte, s Shape) error {
	if err := Text(data); err != nil {
		return err
	}
	return Members(data, s)
}

// Members is Check without Text: the member names alone. A reader that
// takes every string as encoding/json reads it (the MCP server, whose
// protocol library does) needs only this part of the rule.
//
// The document is read by a scanner of JSON's grammar as encoding/json's
// own scanner has it (RFC 8259 strings, numbers and literals, nesting
// at most 10,000 deep in a value read whole): encoding/json's Decoder.Token made
// an error value for every name and plain value it read (its scanner
// learns that a value has ended from the byte after it), a cost on every
// format using the rule. A name is decoded by encoding/json when it holds
// an escape or a byte that is not UTF-8 (FuzzMembersOracle holds this
// reader to the Decoder's).
func Members(data []byte, s Shape) error {
	sc := scanner{data: data}
	if e, ok := sc.value(s, 0).(*Error); ok {
		return e
	}
	return nil
}

// tooDeep stops a Check at MaxDepth.
type tooDeep struct{}

func (tooDeep) Error() string { return "too deep" }

// notJSON stops a Check at the first syntax error.
type notJSON struct{}

func (notJSON) Error() string { return "not JSON" }

// maxNesting is encoding/json's bound on the nesting of a value it reads
// whole (an Opaque or Ignored member's): deeper is a syntax error.
const maxNesting = 10000

// scanner reads data from i on.
type scanner struct {
	data []byte
	i    int
}

// space skips white space and returns the next byte, or 0 at the end.
func (sc *scanner) space() byte {
	for ; sc.i < len(sc.data); sc.i++ {
		switch c := sc.data[sc.i]; c {
		case ' ', '\t', '\n', '\r':
		default:
			return c
		}
	}
	return 0
}

// value reads the value at i, whose objects are of shape s, depth deep.
func (sc *scanner) value(s Shape, depth int) error {
	if depth > MaxDepth {
		return tooDeep{}
	}
	switch sc.space() {
	case '{':
		sc.i++
		seen := map[string]bool{}
		if sc.space() == '}' {
			sc.i++
			return nil
		}
		for {
			if sc.space() != '"' {
				return notJSON{}
			}
			name, ok := sc.name()
			if !ok {
				return notJSON{}
			}
			vs := Shape(nil)
			if s != nil {
				var err error
				if vs, err = s.Member(name); err != nil {
					return err
				}
			}
			if vs != Ignored {
				if seen[name] {
					return &Error{Kind: Repeated, Name: name}
				}
				seen[name] = true
			}
			if sc.space() != ':' {
				return notJSON{}
			}
			sc.i++
			if vs == Opaque || vs == Ignored {
				if !sc.skip() {
					return notJSON{}
				}
			} else if err := sc.value(vs, depth+1); err != nil {
				return err
			}
			switch sc.space() {
			case ',':
				sc.i++
			case '}':
				sc.i++
				return nil
			default:
				return notJSON{}
			}
		}
	case '[':
		sc.i++
		var es Shape
		if s != nil {
			es = s.Elem()
		}
		if sc.space() == ']' {
			sc.i++
			return nil
		}
		for {
			if err := sc.value(es, depth+1); err != nil {
				return err
			}
			switch sc.space() {
			case ',':
				sc.i++
			case ']':
				sc.i++
				return nil
			default:
				return notJSON{}
			}
		}
	}
	if !sc.scalar() {
		return notJSON{}
	}
	return nil
}

// skip reads the value at i whole, as encoding/json reads a value it keeps
// (json.RawMessage): nested at most maxNesting deep.
func (sc *scanner) skip() bool {
	return sc.skipNested(1)
}

// skipNested is skip of a value whose objects and arrays are depth deep.
func (sc *scanner) skipNested(depth int) bool {
	switch sc.space() {
	case '{':
		sc.i++
		if depth > maxNesting {
			return false
		}
		if sc.space() == '}' {
			sc.i++
			return true
		}
		for {
			if sc.space() != '"' || !sc.str() || sc.space() != ':' {
				return false
			}
			sc.i++
			if !sc.skipNested(depth + 1) {
				return false
			}
			switch sc.space() {
			case ',':
				sc.i++
			case '}':
				sc.i++
				return true
			default:
				return false
			}
		}
	case '[':
		sc.i++
		if depth > maxNesting {
			return false
		}
		if sc.space() == ']' {
			sc.i++
			return true
		}
		for {
			if !sc.skipNested(depth + 1) {
				return false
			}
			switch sc.space() {
			case ',':
				sc.i++
			case ']':
				sc.i++
				return true
			default:
				return false
			}
		}
	}
	return sc.scalar()
}

// scalar reads a string, a number, true, false or null at i.
func (sc *scanner) scalar() bool {
	if sc.i >= len(sc.data) {
		return false
	}
	switch c := sc.data[sc.i]; {
	case c == '"':
		return sc.str()
	case c == '-' || '0' <= c && c <= '9':
		return sc.number()
	case c == 't':
		return sc.literal("true")
	case c == 'f':
		return sc.literal("false")
	case c == 'n':
		return sc.literal("null")
	}
	return false
}

func (sc *scanner) literal(word string) bool {
	if !bytes.HasPrefix(sc.data[sc.i:], []byte(word)) {
		return false
	}
	sc.i += len(word)
	return true
}

// number reads a number at i: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (sc *scanner) number() bool {
	d := sc.data
	i := sc.i
	if d[i] == '-' {
		i++
	}
	digits := func() bool {
		start := i
		for i < len(d) && '0' <= d[i] && d[i] <= '9' {
			i++
		}
		return i > start
	}
	switch {
	case i < len(d) && d[i] == '0':
		i++
	case !digits():
		return false
	}
	if i < len(d) && d[i] == '.' {
		i++
		if !digits() {
			return false
		}
	}
	if i < len(d) && (d[i] == 'e' || d[i] == 'E') {
		i++
		if i < len(d) && (d[i] == '+' || d[i] == '-') {
			i++
		}
		if !digits() {
			return false
		}
	}
	sc.i = i
	return true
}

// str reads a string at i (its opening quote): no control character, and
// each escape one of JSON's.
func (sc *scanner) str() bool {
	_, _, ok := sc.strKinds()
	return ok
}

// strKinds is str, and whether the string holds an escape, and a byte that
// is not ASCII.
func (sc *scanner) strKinds() (escaped, nonASCII, ok bool) {
	d := sc.data
	for i := sc.i + 1; i < len(d); i++ {
		switch c := d[i]; {
		case c == '"':
			sc.i = i + 1
			return escaped, nonASCII, true
		case c < 0x20:
			return false, false, false
		case c >= utf8.RuneSelf:
			nonASCII = true
		case c == '\\':
			escaped = true
			if i++; i >= len(d) {
				return false, false, false
			}
			switch d[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if _, ok := hex4(d, i+1); !ok {
					return false, false, false
				}
				i += 4
			default:
				return false, false, false
			}
		}
	}
	return false, false, false
}

// name reads a member name at i, decoded as encoding/json decodes it: the
// bytes themselves when they hold no escape and are UTF-8, else by
// encoding/json (a lone surrogate or a byte that is not UTF-8 is U+FFFD).
func (sc *scanner) name() (string, bool) {
	start := sc.i
	escaped, nonASCII, ok := sc.strKinds()
	if !ok {
		return "", false
	}
	raw := sc.data[start+1 : sc.i-1]
	if !escaped && (!nonASCII || utf8.Valid(raw)) {
		return string(raw), true
	}
	var name string
	if json.Unmarshal(sc.data[start:sc.i], &name) != nil {
		return "", false
	}
	return name, true
}

// Closed is the Shape of an object whose member names are those Known
// accepts, spelt so (any other name is Unknown); of an array, that its
// elements are such objects. The members' values are Opaque, or with Deep
// objects held to the same names at any depth.
type Closed struct {
	Known func(name string) bool
	Deep  bool
}

// Member implements Shape.
func (c Closed) Member(name string) (Shape, error) {
	if !c.Known(name) {
		return nil, &Error{Kind: Unknown, Name: name}
	}
	if c.Deep {
		return c, nil
	}
	return Opaque, nil
}

// Elem implements Shape.
func (c Closed) Elem() Shape { return c }

// Type is the Shape of a value encoding/json decodes into a value of type
// t: an object decoded into a struct may not spell one of the struct's
// member names (its json tags) in other case; names it does not know are
// any JSON. A map's values, a slice's or array's elements have their
// element type's shape; json.RawMessage and other types are any JSON.
func Type(t reflect.Type) Shape {
	return (&types{}).shape(t)
}

// types holds the shapes of the types met in one document, each worked
// out once.
type types struct {
	shapes map[reflect.Type]*typeShape
}

func (c *types) shape(t reflect.Type) Shape {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || t == reflect.TypeFor[json.RawMessage]() {
		return nil
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
	default:
		return nil
	}
	if s, ok := c.shapes[t]; ok {
		return s
	}
	s := &typeShape{c: c, t: t}
	if t.Kind() == reflect.Struct {
		s.fields = map[string]reflect.Type{}
		jsonFields(t, s.fields)
	}
	if c.shapes == nil {
		c.shapes = map[reflect.Type]*typeShape{}
	}
	c.shapes[t] = s
	return s
}

// typeShape is the Shape of a struct (fields: its members), a map or a
// slice or array.
type typeShape struct {
	c      *types
	t      reflect.Type
	fields map[string]reflect.Type
}

func (s *typeShape) Member(name string) (Shape, error) {
	switch s.t.Kind() {
	case reflect.Struct:
		ft, ok := s.fields[name]
		if !ok {
			for known := range s.fields {
				if strings.EqualFold(known, name) {
					return nil, &Error{Kind: OtherCase, Name: name, Known: known}
				}
			}
		}
		return s.c.shape(ft), nil
	case reflect.Map:
		return s.c.shape(s.t.Elem()), nil
	}
	return nil, nil // a list where an object stands: any JSON
}

func (s *typeShape) Elem() Shape {
	if k := s.t.Kind(); k == reflect.Slice || k == reflect.Array {
		return s.c.shape(s.t.Elem())
	}
	return nil // an object where a list stands: any JSON
}

// jsonFields adds the member names encoding/json decodes into struct t (its
// embedded structs' included) with their types.
func jsonFields(t reflect.Type, out map[string]reflect.Type) {
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, out)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
}
