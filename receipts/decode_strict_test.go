package receipts

import (
	"errors"
	"strings"
	"testing"
)

// TestDecodeRefusesShadowedMembers: a receipt's JSON may spell a member only
// as docs/receipts.md names it, and only once. encoding/json alone takes the
// last of two members and matches names case-insensitively, so a stored blob
// could show one session to jq or Python ("sess-evil", the first member, or
// the only one named exactly "session") while readproof verifies another
// ("sess-1") with a genuine MAC.
func TestDecodeRefusesShadowedMembers(t *testing.T) {
	key := testKey(t, 1)
	r := sampleReceipt(t, key)
	good := string(r.Encode())
	if !strings.Contains(good, `"session":"sess-1"`) {
		t.Fatalf("sample receipt without session sess-1: %s", good)
	}
	for name, in := range map[string]string{
		"duplicate member":         strings.Replace(good, `"session":"sess-1"`, `"session":"sess-evil","session":"sess-1"`, 1),
		"case variant":             strings.Replace(good, `"session":"sess-1"`, `"session":"sess-evil","Session":"sess-1"`, 1),
		"case variant alone":       strings.Replace(good, `"session":`, `"SESSION":`, 1),
		"upper-case mac name":      strings.Replace(good, `"mac":`, `"MAC":`, 1),
		"duplicate mac":            strings.Replace(good, `"mac":`, `"mac":"`+strings.Repeat("0", 64)+`","mac":`, 1),
		"escaped duplicate member": strings.Replace(good, `"session":"sess-1"`, `"session":"sess-evil","sess\u0069on":"sess-1"`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := DecodeReceipt([]byte(in))
			if err == nil {
				verr := Verify(got, key)
				t.Fatalf("DecodeReceipt accepted %s\nas session %q (Verify: %v)", in, got.Session, verr)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
		})
	}
	// The exact spelling, in another order and with whitespace, still reads.
	reordered := strings.Replace(good, `{"v":1,`, "{ \"mac\" : \""+r.MAC.String()+"\",\n\"v\":1,", 1)
	reordered = strings.Replace(reordered, `,"mac":"`+r.MAC.String()+`"`, "", 1)
	back, err := DecodeReceipt([]byte(reordered))
	if err != nil {
		t.Fatalf("reordered receipt %s: %v", reordered, err)
	}
	if err := Verify(back, key); err != nil || !back.Equal(r) {
		t.Fatalf("reordered receipt: Verify %v, equal %v", err, back.Equal(r))
	}
}
