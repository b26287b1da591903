package receipts

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

// FuzzCallerMember: the caller a damaged receipt's bytes still name never
// panics to read, is a receipt's own caller when the bytes are a receipt,
// and is only ever the member spelt "caller".
func FuzzCallerMember(f *testing.F) {
	f.Add([]byte(`{"v":9,"caller":"bob"}`), "bob")
	f.Add([]byte(`{"Caller":"bob"}`), "x")
	f.Add([]byte(`not json`), "")
	f.Add([]byte(`{"caller":1}`), "a")
	f.Fuzz(func(t *testing.T, data []byte, caller string) {
		name, ok := callerMember(data)
		var m map[string]json.RawMessage
		if ok && (json.Unmarshal(data, &m) != nil || m["caller"] == nil) {
			t.Fatalf("%q: caller %q read from bytes without a caller member", data, name)
		}
		if caller == "" || !utf8.ValidString(caller) {
			return // not a caller a receipt carries as it is
		}
		r := Receipt{ID: "rcpt_" + "0000000000000000" + "0000000000000000", Format: BoundVersion, Session: "s", Tool: "t", Caller: caller}
		if got, ok := callerMember(r.Encode()); !ok || got != caller {
			t.Fatalf("the caller of a receipt of caller %q read as %q, %v", caller, got, ok)
		}
	})
}
