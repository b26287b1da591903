package gitobj

import "testing"

// isObjectIDLoop is IsObjectID as it was before session 27, a loop over the
// bytes: the oracle of the word-at-a-time check.
func isObjectIDLoop(s []byte) bool {
	if len(s) != 40 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// TestIsObjectIDEveryByte puts every byte value at every position of an id
// (the rest digits, then letters) and compares with the loop.
func TestIsObjectIDEveryByte(t *testing.T) {
	for _, fill := range []byte{'0', '9', 'a', 'f'} {
		b := make([]byte, 40)
		for i := range b {
			b[i] = fill
		}
		for pos := range b {
			for c := 0; c < 256; c++ {
				b[pos] = byte(c)
				want := isObjectIDLoop(b)
				if IsObjectID(b) != want || IsObjectID(string(b)) != want {
					t.Fatalf("IsObjectID(%q) = %v, want %v", b, !want, want)
				}
			}
			b[pos] = fill
		}
	}
}

func FuzzIsObjectID(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567"))
	f.Add([]byte("0123456789ABCDEF0123456789abcdef01234567"))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456"))
	f.Add([]byte("0123456789abcdef0123456789abcdef0123456g"))
	f.Add([]byte("\xb0123456789abcdef0123456789abcdef0123456"))
	f.Add([]byte("/:`g@G\x00\xff0123456789abcdef0123456789abcdef"))
	f.Fuzz(func(t *testing.T, b []byte) {
		want := isObjectIDLoop(b)
		if IsObjectID(b) != want || IsObjectID(string(b)) != want {
			t.Fatalf("IsObjectID(%q) = %v, want %v", b, !want, want)
		}
		if len(b) >= 40 {
			// every 40-byte window, so the fuzzer's inputs of other lengths count
			for i := 0; i+40 <= len(b) && i < 64; i++ {
				w := b[i : i+40]
				if IsObjectID(w) != isObjectIDLoop(w) {
					t.Fatalf("IsObjectID(%q) = %v, want %v", w, !isObjectIDLoop(w), isObjectIDLoop(w))
				}
			}
		}
	})
}

// TestIsObjectIDEveryPair puts every pair of byte values at neighbouring
// positions (inside a word and across two), where a carry out of one byte
// could reach the next.
func TestIsObjectIDEveryPair(t *testing.T) {
	b := []byte("0123456789abcdef0123456789abcdef01234567")
	for _, pos := range []int{6, 7, 38} {
		orig := [2]byte{b[pos], b[pos+1]}
		for c := 0; c < 1<<16; c++ {
			b[pos], b[pos+1] = byte(c), byte(c>>8)
			if want := isObjectIDLoop(b); IsObjectID(b) != want {
				t.Fatalf("IsObjectID(%q) = %v, want %v", b, !want, want)
			}
		}
		b[pos], b[pos+1] = orig[0], orig[1]
	}
}
