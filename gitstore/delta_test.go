package gitstore

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
)

// checkDelta makes the delta of tgt from src and checks that applying it
// to src gives tgt back.
func checkDelta(t *testing.T, src, tgt []byte) []byte {
	t.Helper()
	d := newDeltaIndex(src).deltaTo(nil, tgt, 0)
	if d == nil {
		t.Fatal("no delta without a size bound")
	}
	got, err := applyDelta(src, d)
	if err != nil {
		t.Fatalf("apply: %v (src %d bytes, tgt %d bytes)", err, len(src), len(tgt))
	}
	if !bytes.Equal(got, tgt) {
		t.Fatalf("delta of %d bytes gives %d bytes that differ from the target", len(d), len(got))
	}
	return d
}

// Deltas between versions of a document round-trip through applyDelta and
// cost about the edit; unrelated or tiny inputs round-trip too.
func TestDeltaRoundTrip(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewSource(1))
	doc := make([]byte, 6000)
	rng.Read(doc)
	text := []byte(fmt.Sprintf("%x", doc)) // 12,000 bytes of text
	edited := bytes.Clone(text)
	copy(edited[5000:], "an edit in the middle")
	if d := checkDelta(t, text, edited); len(d) > 120 {
		t.Errorf("delta of a 21-byte edit is %d bytes", len(d))
	}
	// inserted and removed lines
	ins := append(append(bytes.Clone(text[:3000]), "a new line\n"...), text[3000:]...)
	if d := checkDelta(t, text, ins); len(d) > 60 {
		t.Errorf("delta of an 11-byte insertion is %d bytes", len(d))
	}
	del := append(bytes.Clone(text[:3000]), text[3100:]...)
	if d := checkDelta(t, text, del); len(d) > 60 {
		t.Errorf("delta of a removal is %d bytes", len(d))
	}
	// longer than one copy instruction takes, and repeated blocks
	big := bytes.Repeat([]byte(strings.Repeat("z", 100)+"\n"), 3000)
	checkDelta(t, big, append(bytes.Clone(big), 'x'))
	checkDelta(t, big[:70000], big[:10])
	for _, c := range [][2]string{{"", ""}, {"", "abc"}, {"abc", ""}, {"short", "shorter"},
		{strings.Repeat("0123456789abcdef", 3), strings.Repeat("0123456789abcdef", 2) + "x"}} {
		checkDelta(t, []byte(c[0]), []byte(c[1]))
	}
	unrelated := make([]byte, 5000)
	rng.Read(unrelated)
	checkDelta(t, doc, unrelated)
	// a bound: nothing longer is returned
	if d := newDeltaIndex(doc).deltaTo(nil, unrelated, 100); d != nil {
		t.Errorf("a %d-byte delta over a bound of 100", len(d))
	}
	if d := newDeltaIndex(text).deltaTo(nil, edited, 120); d == nil {
		t.Error("no delta within a bound it fits")
	}
}

func FuzzDelta(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef-tail"), []byte("xx0123456789abcdef0123456789abcdefyy"))
	f.Add(bytes.Repeat([]byte("ab"), 100), bytes.Repeat([]byte("ab"), 101))
	f.Fuzz(func(t *testing.T, src, tgt []byte) {
		checkDelta(t, src, tgt)
	})
}
