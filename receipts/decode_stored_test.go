package receipts

import (
	"bytes"
	"strings"
	"testing"
)

// FuzzDecodeStored: DecodeReceipt takes bytes equal to Encode's output
// without checking member names one by one (decodeStored); whatever it
// takes so, the checked decoding takes too, as the same receipt, and what
// the checked decoding refuses it never takes.
func FuzzDecodeStored(f *testing.F) {
	_, r := fuzzSeeds(f)
	f.Add(r.Encode())
	for _, b := range boundSeeds(f) {
		f.Add(b.Encode())
	}
	good := string(r.Encode())
	f.Add([]byte(strings.Replace(good, `"session":"s"`, `"session":"x","session":"s"`, 1)))
	f.Add([]byte(strings.Replace(good, `"session":`, `"Session":`, 1)))
	f.Add([]byte(strings.Replace(good, `"session":"s"`, `"sess\u0069on":"s"`, 1)))
	f.Add([]byte(strings.TrimSuffix(good, "\n") + " \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > MaxEncodedLen {
			return
		}
		fast, ok := decodeStored(data)
		checked, err := decodeChecked(data)
		if !ok {
			return
		}
		if err != nil {
			t.Fatalf("decodeStored took %q, which the checked decoding refuses: %v", data, err)
		}
		if !fast.Equal(checked) || fast.Format != checked.Format || !bytes.Equal(fast.Encode(), data) {
			t.Fatalf("decodeStored and the checked decoding differ on %q:\n%+v\n%+v", data, fast, checked)
		}
	})
}

// TestDecodeStoredTakesOnlyStoredBytes: a stored receipt (Encode's bytes,
// version 1 and 2) decodes without the member-by-member check, which was
// most of the time of a listing; anything else, even a spelling that
// decodes to the same receipt, goes through it.
func TestDecodeStoredTakesOnlyStoredBytes(t *testing.T) {
	t.Parallel()
	key := testKey(t, 1)
	r := sampleReceipt(t, key)
	good := string(r.Encode())
	stored := []string{good}
	for _, b := range []Binding{{Manifest: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, {RunStarted: r.Start}, {}} {
		v2 := r
		v2.Format, v2.Bound = BoundVersion, b
		if r.Run == "" {
			v2.Run = "run-1"
		}
		sealed, err := key.Seal(v2)
		if err != nil {
			t.Fatal(err)
		}
		stored = append(stored, string(sealed.Encode()))
	}
	for _, in := range stored {
		got, ok := decodeStored([]byte(in))
		if !ok {
			t.Errorf("decodeStored refused stored bytes %s", in)
			continue
		}
		want, err := decodeChecked([]byte(in))
		if err != nil || !got.Equal(want) {
			t.Errorf("decodeStored(%s) = %+v; checked: %+v, %v", in, got, want, err)
		}
	}
	for name, in := range map[string]string{
		"duplicate member":   strings.Replace(good, `"session":"sess-1"`, `"session":"sess-evil","session":"sess-1"`, 1),
		"case variant":       strings.Replace(good, `"session":`, `"SESSION":`, 1),
		"escaped name":       strings.Replace(good, `"session":`, `"sess\u0069on":`, 1),
		"escaped value":      strings.Replace(good, `"session":"sess-1"`, `"session":"sess\u002d1"`, 1),
		"unknown member":     strings.Replace(good, `{"v":1,`, `{"v":1,"x":1,`, 1),
		"whitespace":         strings.Replace(good, `{"v":1,`, `{"v": 1,`, 1),
		"no final newline":   strings.TrimSuffix(good, "\n"),
		"trailing data":      good + "{}\n",
		"two newlines":       good + "\n",
		"exit code as float": strings.Replace(good, `"args_sha256"`, `"exit_code":0.0,"args_sha256"`, 1),
	} {
		if _, ok := decodeStored([]byte(in)); ok {
			t.Errorf("%s: decodeStored took %s", name, in)
		}
	}
}
