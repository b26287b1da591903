package evidence

import (
	"crypto/ed25519"
	"testing"
)

// testKey is a deterministic in-memory key; seed picks which.
func testKey(t testing.TB, seed byte) Key {
	t.Helper()
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed + byte(i)
	}
	k, err := NewKey(ed25519.NewKeyFromSeed(s))
	if err != nil {
		t.Fatal(err)
	}
	return k
}
