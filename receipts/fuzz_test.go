package receipts

import (
	"bytes"
	"errors"
	"testing"
	"time"
)

func fuzzSeeds(f *testing.F) (Key, Receipt) {
	key := testKey(f, 5)
	start := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	r, err := key.Seal(Receipt{
		ID: "rcpt_" + "0123456789abcdefghjkmnpqrstvwxyz", Session: "s", Run: "r", Tool: "t",
		Start: start, End: start, ExitCode: intp(137), Signal: "SIGKILL", Error: "boom",
	})
	if err != nil {
		f.Fatal(err)
	}
	return key, r
}

func FuzzDecodeReceipt(f *testing.F) {
	_, r := fuzzSeeds(f)
	f.Add(r.Encode())
	plain := r
	plain.Run, plain.ExitCode, plain.Signal, plain.Error = "", nil, "", ""
	f.Add(plain.Encode())
	f.Add([]byte(`{"v":1}`))
	f.Add([]byte(`{"v":1,"id":"rcpt_","mac":null}`))
	f.Add([]byte("null"))
	// A member given twice, or spelt in another case, is refused
	// (TestDecodeRefusesShadowedMembers).
	f.Add(bytes.Replace(r.Encode(), []byte(`"session":"s"`), []byte(`"session":"x","session":"s"`), 1))
	f.Add(bytes.Replace(r.Encode(), []byte(`"session":"s"`), []byte(`"session":"x","Session":"s"`), 1))
	// version 2: a binding under the MAC (docs/receipts.md, "Version 2")
	for _, b := range boundSeeds(f) {
		f.Add(b.Encode())
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := DecodeReceipt(data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if err := r.Validate(); err != nil {
			t.Fatalf("decoded receipt does not validate: %v", err)
		}
		enc := r.Encode()
		back, err := DecodeReceipt(enc)
		if err != nil {
			t.Fatalf("re-decoding %s: %v", enc, err)
		}
		if !back.Equal(r) || !bytes.Equal(back.Encode(), enc) {
			t.Fatalf("round trip changed the receipt:\n%s\n%s", enc, back.Encode())
		}
	})
}

// FuzzVerify mutates the stored JSON of a genuine receipt: whatever decodes
// must either verify with fields identical to the original or be reported
// as tampered or unknown key; Verify never panics.
func FuzzVerify(f *testing.F) {
	key, r := fuzzSeeds(f)
	enc := r.Encode()
	f.Add(enc)
	f.Add(bytes.Replace(enc, []byte(`"tool":"t"`), []byte(`"tool":"u"`), 1))
	f.Add(bytes.Replace(enc, []byte(`"exit_code":137,`), nil, 1))
	f.Add(bytes.Replace(enc, []byte(`"run":"r",`), []byte(`"run":"r ",`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeReceipt(data)
		if err != nil {
			return
		}
		verr := Verify(got, key)
		switch {
		case verr == nil:
			if !got.Equal(r) {
				t.Fatalf("an altered receipt verifies:\n%s", data)
			}
		case errors.Is(verr, ErrUnknownKey):
			if got.KeyID == key.ID() {
				t.Fatalf("unknown key reported for our own key id: %v", verr)
			}
		case errors.Is(verr, ErrTampered):
			if got.Equal(r) {
				t.Fatalf("the genuine receipt is reported tampered")
			}
		default:
			t.Fatalf("Verify = %v", verr)
		}
	})
}

// boundSeeds are version 2 receipts: bound to a manifest, to a start, and
// unbound.
func boundSeeds(f *testing.F) []Receipt {
	key, r := fuzzSeeds(f)
	var out []Receipt
	for _, b := range []Binding{{Manifest: "4b825dc642cb6eb9a060e54bf8d69288fbee4904"}, {RunStarted: time.Date(2026, 1, 2, 3, 0, 0, 5, time.UTC)}, {}} {
		v2 := r
		v2.Format, v2.Bound = BoundVersion, b
		sealed, err := key.Seal(v2)
		if err != nil {
			f.Fatal(err)
		}
		out = append(out, sealed)
	}
	return out
}

// FuzzVerifyBound is FuzzVerify for a version 2 receipt bound to a
// manifest: no edit of its binding members, its version or anything else
// verifies.
func FuzzVerifyBound(f *testing.F) {
	key, _ := fuzzSeeds(f)
	seeds := boundSeeds(f)
	r := seeds[0]
	enc := r.Encode()
	f.Add(enc)
	f.Add(bytes.Replace(enc, []byte(`"run_manifest":"4b825dc6`), []byte(`"run_manifest":"4b825dc7`), 1))
	f.Add(bytes.Replace(bytes.Replace(enc, []byte(`"v":2`), []byte(`"v":1`), 1), []byte(`,"run_manifest":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"`), nil, 1))
	f.Add(seeds[1].Encode())
	f.Add(seeds[2].Encode())
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := DecodeReceipt(data)
		if err != nil {
			return
		}
		verr := Verify(got, key)
		genuine := false
		for _, s := range seeds {
			// the canonical JSON, not Equal: that compares MAC inputs
			genuine = genuine || bytes.Equal(got.Encode(), s.Encode())
		}
		switch {
		case verr == nil:
			if !genuine {
				t.Fatalf("an altered receipt verifies:\n%s", data)
			}
		case errors.Is(verr, ErrUnknownKey):
			if got.KeyID == key.ID() {
				t.Fatalf("unknown key reported for our own key id: %v", verr)
			}
		case errors.Is(verr, ErrTampered):
			if genuine {
				t.Fatalf("a genuine receipt is reported tampered")
			}
		default:
			t.Fatalf("Verify = %v", verr)
		}
	})
}
