package strictjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// oracleMembers is Members as it was before session 28, reading the
// document with encoding/json's Decoder.Token: FuzzMembersOracle holds the
// scanner to it.
func oracleMembers(data []byte, s Shape) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if e, ok := oracleValue(dec, s, 0).(*Error); ok {
		return e
	}
	return nil
}

func oracleValue(dec *json.Decoder, s Shape, depth int) error {
	if depth > MaxDepth {
		return tooDeep{}
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	switch tok {
	case json.Delim('{'):
		seen := map[string]bool{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return err
			}
			name, _ := k.(string)
			vs := Shape(nil)
			if s != nil {
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
			if vs == Opaque || vs == Ignored {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			if err := oracleValue(dec, vs, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	case json.Delim('['):
		var es Shape
		if s != nil {
			es = s.Elem()
		}
		for dec.More() {
			if err := oracleValue(dec, es, depth+1); err != nil {
				return err
			}
		}
		_, err = dec.Token()
		return err
	}
	return nil
}

// oracleShapes are the shapes the oracle and the scanner are compared
// under: any JSON, a struct type, closed names (deep, and with Opaque
// values), and members skipped (Ignored).
func oracleShapes() []Shape {
	known := func(n string) bool { return n == "a" || n == "v" || n == "mac" || n == "uri" || n == "é" }
	return []Shape{
		nil,
		Type(reflect.TypeFor[outer]()),
		Closed{Known: known, Deep: true},
		Closed{Known: known},
		claimsShape{},
	}
}

// sameAsOracle fails t unless Members and Check give for data what the
// Decoder's reading gave.
func sameAsOracle(t *testing.T, data []byte) {
	t.Helper()
	for i, s := range oracleShapes() {
		got, want := Members(data, s), oracleMembers(data, s)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("shape %d: Members(%.200q) = %#v, the Decoder's reading %#v", i, data, got, want)
		}
		wantCheck := Text(data)
		if wantCheck == nil {
			wantCheck = want
		}
		if got := Check(data, s); !reflect.DeepEqual(got, wantCheck) {
			t.Fatalf("shape %d: Check(%.200q) = %#v, want %#v", i, data, got, wantCheck)
		}
	}
}

// oracleSeeds are documents at the edges of the grammar: each kind of
// scalar, escape and syntax error, before and after a refused member.
var oracleSeeds = []string{
	`{"a":1,"b":[{"a":1}]}`, `{"a":1,"a":2}`, `{"a":1,"\u0061":2}`, `{"name":"n","items":[{"URI":"u"}]}`,
	`[{"x":{"y":[{"z":1,"z":1}]}}]`, `{"a":-0.5e+10,"a":2}`, `{"a":01,"a":2}`, `{"a":1.,"a":2}`, `{"a":-,"a":2}`,
	`{"a":1e,"a":2}`, `{"a":tru,"a":2}`, `{"a":true,"a":false,"b":null}`, `{"a":nul}`, `{"a":"\x01","a":1}`,
	`{"a":"\q","a":1}`, `{"a":"\u12G4","a":1}`, `{"\ud800":1,"\ufffd":2}`, "{\"\xff\":1,\"\xef\xbf\xbd\":2}",
	`{"é":1,"é":2}`, `{"a":1,}`, `{,"a":1}`, `[1,]`, `[1 2]`, `{"a" 1}`, `{"a":1 "a":2}`, `{"a":[1,{"b":2,"b":3}]}`,
	`{"v":{"x":1,"x":1},"v":1}`, `{"n":1,"n":2,"receipts":[1,2],"receipts":3}`, `{"mac":[{"a":1,"a":1}]}`,
	`{"Name":1`, `{"name":1,"Name"`, ` { "a" : 1 , "a" : 2 } `, "\t{\n\"a\"\r:1,\"a\":2}", `{"a":{"b":}}`,
	`{"a":"x\"y","a":1}`, `{"a\\":1,"a\\":2}`, `{"a":1}{"a":1,"a":2}`, `"x"`, `12`, ``, `}`, `{"a":[}`,
	`{"v":"\/\b\f\n\r\t","v":1}`, `{"items":[{"uri":"u"},{"URI":"u"}]}`, `{"by_name":{"k":{"Uri":"u"}}}`,
}

// FuzzMembersOracle: the scanner gives every document what encoding/json's
// Decoder.Token gave (the errors, equal to the last field), under shapes
// of every kind.
func FuzzMembersOracle(f *testing.F) {
	for _, s := range oracleSeeds {
		f.Add([]byte(s))
	}
	for _, e := range oracleEdges {
		f.Add([]byte(`{"a":` + e.v + `,"a":2}`))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsOracle(t, data)
	})
}

// TestMembersOracleDepth: at the nesting bounds (MaxDepth for values read
// member by member, encoding/json's 10,000 for a value read whole) the
// scanner stops where the Decoder did: a refused member after the value is
// reported when the value is within the bound, and not when it is over.
func TestMembersOracleDepth(t *testing.T) {
	for _, n := range []int{MaxDepth - 1, MaxDepth, MaxDepth + 1, MaxDepth + 2} {
		nested := strings.Repeat("[", n) + strings.Repeat("]", n)
		for _, doc := range []string{
			`{"a":` + nested + `,"a":1}`,   // read member by member (nil, typed) or whole (closed)
			`{"mac":` + nested + `,"V":1}`, // whole under Closed without Deep
			`{"receipts":` + nested + `,"receipts":1}`,
			`[` + nested + `,{"a":1,"a":1}]`,
		} {
			sameAsOracle(t, []byte(doc))
		}
	}
	// the bound matters: over it the refusal after the value is not seen
	over := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	if err := Members([]byte(`{"mac":`+over+`,"V":1}`), Closed{Known: func(n string) bool { return n == "mac" }}); err != nil {
		t.Fatalf("a value over encoding/json's bound read whole: %v", err)
	}
	within := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	if err := Members([]byte(`{"mac":`+within+`,"V":1}`), Closed{Known: func(n string) bool { return n == "mac" }}); err == nil {
		t.Fatal("a value within encoding/json's bound read whole: the member after it was not refused")
	}
}
