package strictjson

import (
	"errors"
	"strings"
	"testing"
)

// oracleEdges are values at the grammar's edges, and whether each is JSON
// (the reading goes on past it): TestMembersOracleEdges reads them in
// every place a value can stand, and FuzzMembersOracle starts from them.
var oracleEdges = []struct {
	v  string
	ok bool
}{
	// numbers
	{`0`, true}, {`-0`, true}, {`-0.0`, true}, {`0e0`, true}, {`1E+2`, true}, {`1e-2`, true},
	{`1e400`, true}, {`-1e400`, true}, {`1e-400`, true}, {`1e99999999999999999999999999`, true},
	{`123456789012345678901234567890`, true},
	{`01`, false}, {`-01`, false}, {`00`, false}, {`1.`, false}, {`.5`, false}, {`+1`, false},
	{`1e`, false}, {`1e+`, false}, {`-`, false}, {`--1`, false}, {`0x10`, false}, {`1_000`, false},
	{`NaN`, false}, {`Infinity`, false}, {`-Infinity`, false},
	// literals
	{`true`, true}, {`false`, true}, {`null`, true},
	{`tru`, false}, {`True`, false}, {`nul`, false}, {`nulll`, false}, {`undefined`, false},
	// strings: escapes, control characters, NUL, text that is not UTF-8
	{`""`, true}, {`"\"\\\/\b\f\n\r\t"`, true}, {`"\u0000"`, true}, {`"\u00e9\u00E9"`, true},
	{`"\ud800"`, true}, {`"\udc00\ud800"`, true}, {`"\ud83d\ude00"`, true}, {"\"\x7f\"", true},
	{"\"\xff\"", true}, {"\"\xed\xa0\x80\"", true}, {"\"\xc0\xaf\"", true}, {`"é"`, true},
	{"\"\x00\"", false}, {"\"\x1f\"", false}, {"\"\t\"", false}, {"\"\n\"", false}, {`"\u12"`, false},
	{`"\u12G4"`, false}, {`"\U0041"`, false}, {`"\a"`, false}, {`"\'"`, false}, {`"\x41"`, false},
	{`"\`, false}, {`"abc`, false}, {`'a'`, false},
	// white space: JSON's four, and no other
	{" \t\r\n1 \t\r\n", true},
	{"\v1", false}, {"\f1", false}, {"\u00a01", false}, {"\ufeff1", false}, {"\x001", false},
	// containers
	{`[]`, true}, {`{}`, true}, {`[ ]`, true}, {`{ }`, true}, {`[[],{}]`, true},
	{`[,]`, false}, {`[1,]`, false}, {`{,}`, false}, {`{"x"}`, false}, {`{"x":}`, false}, {`{1:1}`, false},
	{`[1}`, false}, {`{"x":1]`, false},
}

// TestMembersOracleEdges: at the grammar's edges (numbers, strings,
// literals, white space, what comes before and after the value) the
// scanner accepts what encoding/json's Decoder.Token accepted and stops
// where it stopped (sameAsOracle), and what that is, pinned: a value the
// grammar accepts is read past, so the repeated member after it is
// refused; at one it refuses, the reading stops and the document is left
// to the decoder (nil). Each value is read member by member and whole
// (an Opaque member's), and each string as a member name too.
func TestMembersOracleEdges(t *testing.T) {
	for _, c := range oracleEdges {
		docs := []string{
			`{"a":` + c.v + `,"a":2}`,                           // member by member: a repeat after the value
			`{"mac":` + c.v + `,"V":1,"a":1,"a":1}`,             // whole (Closed, not Deep): an unknown name after it
			`[` + c.v + `,{"a":1,"a":1}]`,                       // an element
			`{"receipts":` + c.v + `,"receipts":1}`,             // whole, Opaque under claimsShape
			`{"n":` + c.v + `,"n":1,"receipts":1,"receipts":2}`, // whole, Ignored
		}
		if strings.HasPrefix(c.v, `"`) {
			docs = append(docs, `{`+c.v+`:1,`+c.v+`:2}`) // a member name, repeated
		}
		for _, doc := range docs {
			sameAsOracle(t, []byte(doc))
			err := Members([]byte(doc), nil)
			var e *Error
			switch {
			case c.ok && !errors.As(err, &e):
				t.Errorf("Members(%q) = %v: the value %q not read past", doc, err, c.v)
			case !c.ok && err != nil:
				t.Errorf("Members(%q) = %v: read past the value %q, which is not JSON", doc, err, c.v)
			}
		}
	}
	// before and after the value: nothing, a byte-order mark, what follows
	for doc, refused := range map[string]bool{
		``:                                  false,
		" \n\t\r":                           false,
		"\ufeff" + `{"a":1,"a":2}`:          false, // encoding/json refuses a BOM: left to it
		`{"a":1,"a":2}` + "\x00garbage":     true,
		`{"a":1}{"a":1,"a":2}`:              false, // the first value alone is read
		`{"a":1} {"a":1,"a":2}`:             false,
		`{"a":1,"a":2`:                      true, // refused before the end
		`{"a":1,"b":{"c":1,"c":2}` + "\x00": true,
	} {
		sameAsOracle(t, []byte(doc))
		if err := Members([]byte(doc), nil); (err != nil) != refused {
			t.Errorf("Members(%q) = %v, want refused %v", doc, err, refused)
		}
	}
}
