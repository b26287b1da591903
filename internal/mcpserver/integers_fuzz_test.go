package mcpserver

import (
	"encoding/json"
	"math/big"
	"testing"
)

// FuzzReadsAsInteger: what readsAsInteger lets through as an integer is
// read on the SDK's way (a float64 in its shortest form, then the tool's
// int64), and every integer it refuses is not.
func FuzzReadsAsInteger(f *testing.F) {
	for _, n := range []string{"0", "-1", "9007199254740992", "9007199254740993", "9223372036854774784", "9223372036854775807",
		"-9223372036854775808", "1e3", "1e300", "-1e19", "1.5", "1e400", "00", "-0"} {
		f.Add(n)
	}
	f.Fuzz(func(t *testing.T, n string) {
		var num json.Number
		if json.Unmarshal([]byte(n), &num) != nil {
			return // not a JSON number: the schema's to refuse
		}
		exact, ok := new(big.Rat).SetString(n)
		if !ok || len(n) > 64 {
			return
		}
		var f64 float64
		if json.Unmarshal([]byte(n), &f64) != nil {
			if readsAsInteger(n) && exact.IsInt() {
				t.Fatalf("%s: no float64, but let through", n)
			}
			return
		}
		// the SDK's way: float64, marshalled, decoded as int64
		data, _ := json.Marshal(f64)
		read := json.Unmarshal(data, new(int64)) == nil
		if exact.IsInt() && readsAsInteger(n) != read {
			t.Fatalf("%s: readsAsInteger %v, but the SDK's way (%s) reads it: %v", n, readsAsInteger(n), data, read)
		}
	})
}
