package strictjson

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	URI string `json:"uri"`
}

type outer struct {
	Name    string           `json:"name"`
	Items   []inner          `json:"items"`
	ByName  map[string]inner `json:"by_name"`
	Ptr     *inner           `json:"ptr"`
	Raw     json.RawMessage  `json:"raw"`
	Skipped string           `json:"-"`
	inner
}

// TestCheck is the rule's one test table: every document, the shape it is
// checked against, and the refusal (kind and name) or none.
func TestCheck(t *testing.T) {
	typed := Type(reflect.TypeFor[outer]())
	flat := Closed{Known: func(n string) bool { return n == "format" || n == "entries" || n == "verdict" }, Deep: true}
	top := Closed{Known: func(n string) bool { return n == "v" || n == "mac" }}
	claims := claimsShape{}
	for _, c := range []struct {
		name  string
		shape Shape
		in    string
		kind  Kind   // 0: accepted
		bad   string // the name refused
	}{
		// any JSON: names are free, each once in its object
		{"any: free names", nil, `{"a":1,"A":2,"b":{"a":[{"a":1}]}}`, 0, ""},
		{"any: repeated", nil, `{"a":1,"a":2}`, Repeated, "a"},
		{"any: repeated deep", nil, `[{"x":{"y":[{"z":1,"z":1}]}}]`, Repeated, "z"},
		{"any: repeated escaped", nil, `{"a":1,"\u0061":2}`, Repeated, "a"},
		{"any: same name in two objects", nil, `[{"a":1},{"a":1}]`, 0, ""},
		{"any: scalar", nil, `"x"`, 0, ""},
		// a struct type: its names only exactly so
		{"type: exact", typed, `{"name":"n","items":[{"uri":"u"}],"by_name":{"k":{"uri":"u"}},"ptr":{"uri":"u"},"uri":"e","other":1}`, 0, ""},
		{"type: other case", typed, `{"Name":"n"}`, OtherCase, "Name"},
		{"type: other case in a list", typed, `{"items":[{"uri":"u"},{"URI":"u"}]}`, OtherCase, "URI"},
		{"type: other case in a map value", typed, `{"by_name":{"k":{"Uri":"u"}}}`, OtherCase, "Uri"},
		{"type: other case behind a pointer", typed, `{"ptr":{"uRI":"u"}}`, OtherCase, "uRI"},
		{"type: other case of an embedded member", typed, `{"URI":"u"}`, OtherCase, "URI"},
		{"type: a name of no other case is free", typed, `{"items":[{"urx":1}],"names":1}`, 0, ""},
		{"type: a map's keys are free", typed, `{"by_name":{"Name":{"uri":"u"}}}`, 0, ""},
		{"type: raw is any JSON", typed, `{"raw":{"URI":1,"Name":2}}`, 0, ""},
		{"type: raw repeated", typed, `{"raw":{"a":1,"a":2}}`, Repeated, "a"},
		{"type: json:\"-\" is no member", typed, `{"Skipped":1}`, 0, ""},
		{"type: repeated", typed, `{"name":"a","name":"b"}`, Repeated, "name"},
		// a closed set of names
		{"names: exact", top, `{"v":1,"mac":{"x":1,"x":1}}`, 0, ""},
		{"names: unknown", top, `{"v":1,"V":1}`, Unknown, "V"},
		{"names: repeated", top, `{"v":1,"mac":"a","mac":"b"}`, Repeated, "mac"},
		{"names everywhere: exact", flat, `{"format":"f","entries":[{"verdict":"v"}]}`, 0, ""},
		{"names everywhere: unknown deep", flat, `{"format":"f","entries":[{"Verdict":"v"}]}`, Unknown, "Verdict"},
		{"names everywhere: repeated deep", flat, `{"entries":[{"verdict":1,"verdict":2}]}`, Repeated, "verdict"},
		// members the reader skips may repeat
		{"ignored repeat", claims, `{"n":1,"n":2,"receipts":[]}`, 0, ""},
		{"read member repeated", claims, `{"receipts":[],"n":1,"receipts":[]}`, Repeated, "receipts"},
		// what follows the value is not read
		{"trailing", nil, `{"a":1} {"a":1,"a":1}`, 0, ""},
	} {
		err := Check([]byte(c.in), c.shape)
		var e *Error
		switch {
		case c.kind == 0 && err != nil:
			t.Errorf("%s: Check(%s) = %v, want accepted", c.name, c.in, err)
		case c.kind != 0 && (!errors.As(err, &e) || e.Kind != c.kind || e.Name != c.bad):
			t.Errorf("%s: Check(%s) = %v, want kind %d of %q", c.name, c.in, err, c.kind, c.bad)
		}
	}
}

type claimsShape struct{}

func (claimsShape) Member(name string) (Shape, error) {
	if name == "receipts" {
		return Opaque, nil
	}
	return Ignored, nil
}
func (claimsShape) Elem() Shape { return nil }

// TestCheckMessages pins the wording the callers' tests rely on, and that a
// hostile name is cut.
func TestCheckMessages(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1,"a":2}`:                         `member "a" appears twice in one object: JSON readers disagree about which one counts`,
		`{"b":1}`:                               `unknown field "b"`,
		`{"` + strings.Repeat("é", 60) + `":1}`: `unknown field "` + strings.Repeat("é", 40) + `…"`,
		`{"URI":1}`:                             `member "URI" is not the format's "uri": member names are case-sensitive`,
	} {
		var s Shape = Closed{Known: func(n string) bool { return n == "a" }}
		if strings.Contains(in, "URI") {
			s = Type(reflect.TypeFor[inner]())
		}
		if err := Check([]byte(in), s); err == nil || err.Error() != want {
			t.Errorf("Check(%s) = %v, want %s", in, err, want)
		}
	}
}

// TestCheckSyntax: what is not JSON, or deeper than MaxDepth, is left to
// encoding/json (which refuses it), unless a member before the error was
// refused.
func TestCheckSyntax(t *testing.T) {
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	for _, in := range []string{``, `{`, `{"a":}`, `{"a" 1}`, `[1,]`, `}`, `{"a":1,"b":[1,}`, deep} {
		if err := Check([]byte(in), nil); err != nil {
			t.Errorf("Check(%.20q) = %v, want nil", in, err)
		}
		var v any
		if json.Unmarshal([]byte(in), &v) == nil {
			t.Errorf("encoding/json accepts %.20q: Check would leave it unchecked", in)
		}
	}
	if err := Check([]byte(`{"a":1,"a":2,`), nil); err == nil {
		t.Errorf("Check of a repeated member before a syntax error: nil")
	}
}

// FuzzCheck: Check never panics; it refuses only what a strict reader finds
// ambiguous: a document it accepts as any JSON has, in every object, each
// name once (what decoding into a map loses nothing of). Its refusals are
// an *Error, or a *TextError for text readers read otherwise (before
// session 28 this test took the second for a failure: "\xff").
func FuzzCheck(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":[{"a":1}]}`))
	f.Add([]byte(`{"a":1,"a":2}`))
	f.Add([]byte(`{"a":1,"\u0061":2}`))
	f.Add([]byte(`{"name":"n","items":[{"URI":"u"}]}`))
	f.Add([]byte(`[{"x":{"y":[{"z":1,"z":1}]}}]`))
	typed := Type(reflect.TypeFor[outer]())
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, s := range []Shape{typed, nil} {
			if err := Check(data, s); err != nil {
				_, member := err.(*Error)
				_, text := err.(*TextError)
				if !member && !text || text && Text(data) == nil {
					t.Fatalf("Check(%q) = %v, not an *Error or Text's *TextError", data, err)
				}
			}
		}
		err := Check(data, nil)
		if err == nil && json.Valid(data) {
			if n, m := countNames(t, data); n != m {
				t.Fatalf("Check accepted %q: %d member names, %d distinct per object", data, n, m)
			}
		}
	})
}

// countNames counts member names, and distinct member names per object,
// with a second, recursive reader of its own.
func countNames(t *testing.T, data []byte) (all, distinct int) {
	var walk func(v json.RawMessage)
	walk = func(v json.RawMessage) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(v, &obj) == nil && obj != nil {
			distinct += len(obj)
			dec := json.NewDecoder(strings.NewReader(string(v)))
			_, _ = dec.Token()
			for dec.More() {
				_, _ = dec.Token()
				var m json.RawMessage
				if dec.Decode(&m) != nil {
					t.Fatalf("re-reading %s", v)
				}
				all++
			}
			for _, m := range obj {
				walk(m)
			}
			return
		}
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) == nil {
			for _, m := range arr {
				walk(m)
			}
		}
	}
	walk(data)
	return all, distinct
}
