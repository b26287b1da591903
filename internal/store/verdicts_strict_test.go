package store

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestDecodeVerdictsRefusesShadowedMembers: a verdicts.json member may be
// spelt only as docs/store-format.md names it, and only once per object.
// encoding/json alone keeps the last of two members and matches names
// case-insensitively, so an authentic record (its MAC verifies) could be
// edited to show READ_VERIFIED to jq or Python while readproof reads, and
// authenticates, HALLUCINATED.
func TestDecodeVerdictsRefusesShadowedMembers(t *testing.T) {
	t.Parallel()
	keys, _ := vectorKeys(t)
	rec := vectorRecord()
	if err := rec.seal(keys, vectorParent); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	good := string(data)
	const hall = `"verdict":"HALLUCINATED"`
	if !strings.Contains(good, hall) {
		t.Fatalf("vector record without %s: %s", hall, good)
	}
	for name, in := range map[string]string{
		"duplicate entry member":    strings.Replace(good, hall, `"verdict":"READ_VERIFIED",`+hall, 1),
		"case variant entry member": strings.Replace(good, hall, `"verdict":"READ_VERIFIED","Verdict":"HALLUCINATED"`, 1),
		"escaped duplicate":         strings.Replace(good, hall, `"verdict":"READ_VERIFIED","verdic\u0074":"HALLUCINATED"`, 1),
		"case variant alone":        strings.Replace(good, `"mac":`, `"MAC":`, 1),
		"duplicate top member":      strings.Replace(good, `"check":2`, `"check":9,"check":2`, 1),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := decodeVerdicts("r1", []byte(in))
			if err == nil {
				t.Fatalf("decodeVerdicts accepted %s\nentry 1 verdict %q, MAC check: %v", in, got.Entries[1].Verdict, CheckVerdictMAC(got, vectorParent, keys))
			}
			if !errors.Is(err, ErrVerdicts) {
				t.Errorf("error %v does not wrap ErrVerdicts", err)
			}
		})
	}
	back, err := decodeVerdicts("r1", data)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckVerdictMAC(back, vectorParent, keys); err != nil {
		t.Fatalf("the record as written: %v", err)
	}
}
