package receipts

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"
)

func TestCanonicalize(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{}`, `{}`},
		{` [ ] `, `[]`},
		{`{"b":1,"a":2}`, `{"a":2,"b":1}`},
		{"{\n  \"z\": [1, 2, {\"y\": null, \"x\": true}],\n  \"a\": \"s\"\n}", `{"a":"s","z":[1,2,{"x":true,"y":null}]}`},
		// Member order by UTF-16 code units: U+FF61 (one unit) sorts after
		// U+1F600 (a surrogate pair starting 0xD83D), unlike UTF-8 order.
		{`{"\uff61":1,"😀":2,"a":3}`, `{"a":3,"😀":2,"｡":1}`},
		{`{"aa":1,"a":2,"":3}`, `{"":3,"a":2,"aa":1}`},
		// Strings: only '"', '\\' and controls are escaped.
		{`"\u0041\/\u00e9\u2028"`, "\"A/é\u2028\""},
		{`"\b\f\n\r\t\u0000\u001f\u007f"`, `"\b\f\n\r\t\u0000\u001f` + "\x7f\""},
		{`"\"\\"`, `"\"\\"`},
		{`"\ud83d\ude00"`, `"😀"`},
		// Numbers as ECMAScript prints doubles.
		{`[1.0, -0, 0.0, 1e3, 1E+3, 100e-2, 0.1, 1e21, 1e20, 123456789012345678901, 1e-6, 1e-7, -1.5e-7, 5e-324, 1.7976931348623157e308, 0.000001234, 4.35, 2e-3, 9007199254740993]`,
			`[1,0,0,1000,1000,1,0.1,1e+21,100000000000000000000,123456789012345680000,0.000001,1e-7,-1.5e-7,5e-324,1.7976931348623157e+308,0.000001234,4.35,0.002,9007199254740992]`},
		{`true`, `true`},
		{` null `, `null`},
	}
	for _, c := range cases {
		got, err := Canonicalize([]byte(c.in))
		if err != nil {
			t.Errorf("Canonicalize(%q): %v", c.in, err)
			continue
		}
		if string(got) != c.want {
			t.Errorf("Canonicalize(%q)\n got %s\nwant %s", c.in, got, c.want)
		}
		// Idempotent, and still the same JSON value.
		again, err := Canonicalize(got)
		if err != nil || string(again) != string(got) {
			t.Errorf("Canonicalize is not idempotent on %q: %q, %v", got, again, err)
		}
	}
}

func TestCanonicalizeRefuses(t *testing.T) {
	for _, in := range []string{
		``, ` `, `{`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{a:1}`, `[1 2]`, `01`, `1.`, `.5`, `-`, `1e`, `+1`,
		`{"a":1,"a":2}`, `"\ud800"`, `"\udc00"`, `"\ud800\u0041"`, "\"\xff\"", "\"a\nb\"", `"\x"`, `"\u12"`,
		`1e400`, `-1e400`, `[1] [2]`, `tru`, `nul`, `NaN`, `Infinity`, `"abc`,
	} {
		if out, err := Canonicalize([]byte(in)); err == nil {
			t.Errorf("Canonicalize(%q) = %q, want an error", in, out)
		} else if !errors.Is(err, ErrJSON) {
			t.Errorf("Canonicalize(%q) error %v does not wrap ErrJSON", in, err)
		}
	}
	deep := make([]byte, 0, 2*(maxJSONDepth+2))
	for i := 0; i < maxJSONDepth+2; i++ {
		deep = append(deep, '[')
	}
	for i := 0; i < maxJSONDepth+2; i++ {
		deep = append(deep, ']')
	}
	if _, err := Canonicalize(deep); err == nil {
		t.Error("Canonicalize accepted nesting deeper than the limit")
	}
}

// TestESNumberRoundTrips checks appendESNumber against strconv over many
// doubles: the printed form parses back to the same value and uses the
// exponent form exactly where ECMAScript does.
func TestESNumberRoundTrips(t *testing.T) {
	vals := []float64{1, 10, 1e20, 1e21, 1e-6, 1e-7, 123.456, math.MaxFloat64, math.SmallestNonzeroFloat64, 0.1, 1 / 3.0}
	for e := -330; e <= 310; e += 7 {
		vals = append(vals, math.Pow(10, float64(e))*1.2345, -math.Pow(10, float64(e))*9.87)
	}
	for _, v := range vals {
		if math.IsInf(v, 0) || v == 0 {
			continue
		}
		s := string(appendESNumber(nil, v))
		back, err := strconv.ParseFloat(s, 64)
		if err != nil || back != v {
			t.Errorf("appendESNumber(%g) = %q does not parse back (%v, %v)", v, s, back, err)
		}
		abs := math.Abs(v)
		hasExp := false
		for _, c := range s {
			if c == 'e' {
				hasExp = true
			}
		}
		if wantExp := abs >= 1e21 || abs < 1e-6; hasExp != wantExp {
			t.Errorf("appendESNumber(%g) = %q: exponent form %v, want %v", v, s, hasExp, wantExp)
		}
	}
}

func TestJSONArgsIgnoresFormatting(t *testing.T) {
	a, err := JSONArgs([]byte(`{"path": "a.txt", "limit": 10.0}`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := JSONArgs([]byte("{\"limit\":1e1,\n\"path\":\"\\u0061.txt\"}"))
	if err != nil {
		t.Fatal(err)
	}
	c, _ := JSONArgs([]byte(`{"path": "a.txt", "limit": 11}`))
	if a.SHA256() != b.SHA256() || a.SHA256() == c.SHA256() {
		t.Errorf("JSONArgs: equal documents hash %s/%s, different one %s", a.SHA256(), b.SHA256(), c.SHA256())
	}
	// A JSON array of strings never hashes like the same argv.
	j, _ := JSONArgs([]byte(`["go","test"]`))
	if j.SHA256() == ArgvArgs([]string{"go", "test"}).SHA256() {
		t.Error("JSON args and argv share a hash")
	}
	if ArgvArgs([]string{"ab", "c"}).SHA256() == ArgvArgs([]string{"a", "bc"}).SHA256() ||
		ArgvArgs([]string{""}).SHA256() == ArgvArgs(nil).SHA256() {
		t.Error("argv framing is not injective")
	}
}

func TestResultHashes(t *testing.T) {
	base := CommandResult([]byte("out"), []byte("err"), 0, "")
	for name, r := range map[string]Result{
		"swap streams": CommandResult([]byte("err"), []byte("out"), 0, ""),
		"shift bytes":  CommandResult([]byte("ou"), []byte("terr"), 0, ""),
		"exit 1":       CommandResult([]byte("out"), []byte("err"), 1, ""),
		"bytes":        BytesResult([]byte("outerr")),
	} {
		if r.SHA256() == base.SHA256() {
			t.Errorf("%s hashes like the base result", name)
		}
	}
	if BytesResult(nil).SHA256() == CommandResult(nil, nil, 0, "").SHA256() {
		t.Error("empty bytes result hashes like an empty command result")
	}
}

func FuzzCanonicalize(f *testing.F) {
	for _, s := range []string{`{"b":1,"a":[1.5e3,"x\u00e9",null,true]}`, `[]`, `"\ud83d\ude00"`, `1e-7`, `{"a":{"a":{}}}`, `-0.0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := Canonicalize(data)
		if err != nil {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("canonical form %q is not valid JSON", out)
		}
		again, err := Canonicalize(out)
		if err != nil || string(again) != string(out) {
			t.Fatalf("not idempotent: %q -> %q (%v)", out, again, err)
		}
		// The canonical form is the same JSON value as the input (compared
		// through encoding/json, which accepts every document we accept).
		var a, b any
		if json.Unmarshal(data, &a) != nil || json.Unmarshal(out, &b) != nil {
			t.Fatalf("encoding/json refuses %q or %q", data, out)
		}
		if !sameJSONValue(a, b) {
			t.Fatalf("value changed: %q vs %q", data, out)
		}
	})
}

// sameJSONValue compares decoded JSON values; numbers compare as doubles
// (so -0 equals 0, as in JSON's data model and ECMAScript).
func sameJSONValue(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			if w, ok := y[k]; !ok || !sameJSONValue(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameJSONValue(x[i], y[i]) {
				return false
			}
		}
		return true
	default:
		return a == b
	}
}
