package probe

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// FuzzParseKey: the key file parser never panics, accepts only 64 hex digits
// with an optional line break, and never quotes the input in its error.
func FuzzParseKey(f *testing.F) {
	good := bytes.Repeat([]byte("ab"), 32)
	f.Add(good)
	f.Add(append(append([]byte{}, good...), '\n'))
	f.Add(append(append([]byte{}, good...), '\r', '\n'))
	f.Add(bytes.Repeat([]byte("0"), 64))
	f.Add([]byte("zz"))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		key, err := parseKey("k", data)
		if err != nil {
			// Only the two fixed messages exist; neither depends on the data.
			_, bad := parseKey("k", []byte("x"))
			_, zero := parseKey("k", bytes.Repeat([]byte("0"), 64))
			if err.Error() != bad.Error() && err.Error() != zero.Error() {
				t.Fatalf("unexpected error text: %v", err)
			}
			return
		}
		text := bytes.TrimSuffix(bytes.TrimSuffix(data, []byte("\n")), []byte("\r"))
		if len(key) != 32 || !bytes.EqualFold([]byte(hex.EncodeToString(key)), text) {
			t.Fatalf("accepted %q as %x", data, key)
		}
	})
}
