package manifest

import "testing"

// lowerHexBytes is lowerHex one byte at a time.
func lowerHexBytes(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// lowerHex agrees with the byte-at-a-time test for every byte value at
// every position of strings of 1 to 17 bytes.
func TestLowerHexEveryByte(t *testing.T) {
	for n := 1; n <= 17; n++ {
		for pos := 0; pos < n; pos++ {
			b := []byte("0123456789abcdef0"[:n])
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				if got, want := lowerHex(string(b)), lowerHexBytes(string(b)); got != want {
					t.Fatalf("lowerHex(%q) = %v, want %v", b, got, want)
				}
			}
		}
	}
	if !lowerHex("") || !IsContentHash("sha256:"+"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef") {
		t.Error("hex refused")
	}
}

func FuzzLowerHex(f *testing.F) {
	f.Add("0123456789abcdef")
	f.Add("0123456789abcdeg")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := lowerHex(s), lowerHexBytes(s); got != want {
			t.Fatalf("lowerHex(%q) = %v, want %v", s, got, want)
		}
	})
}
