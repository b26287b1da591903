package proofread

import (
	"bytes"
	"testing"

	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// TestIssuance: an entry mounted now is checked under the session bound to
// its content; an entry mounted before sessions were bound (RUNID.POSITION)
// is recognised by its delivered hash and keeps working; a record whose hash
// no session reproduces (another key) falls back to the bound session and
// says the hash was not reproduced.
func TestIssuance(t *testing.T) {
	keys, err := probe.DeriveKeys(bytes.Repeat([]byte{7}, probe.MasterSize))
	if err != nil {
		t.Fatal(err)
	}
	other, err := probe.DeriveKeys(bytes.Repeat([]byte{8}, probe.MasterSize))
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("Products can be refunded within 30 days.\n")
	const bucket = 5988005
	entry := func(session string) manifest.Entry {
		out, err := keys.Deliver(content, probe.Issued{Session: session, Bucket: bucket, Length: 16})
		if err != nil {
			t.Fatal(err)
		}
		return manifest.Entry{Position: 3, ContentHash: SHA256(content),
			Probe: &manifest.Probe{Bucket: bucket, Length: 16, DeliveredHash: SHA256(out), DeliveredSize: int64(len(out))}}
	}
	const bound = "run-1.3.cc8b0bb212e93151d720746e36ff3b707"
	for _, c := range []struct {
		name     string
		keys     probe.Keys
		recorded string // the session the entry was mounted under
		content  []byte
		want     string
		ok       bool
	}{
		{"bound session", keys, bound, content, bound, true},
		{"mounted before sessions were bound", keys, "run-1.3", content, "run-1.3", true},
		{"another key", other, "run-1.3", content, bound, false},
		{"no snapshot", keys, "run-1.3", nil, bound, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			iss, ok, err := issuance(c.keys, "run-1", entry(c.recorded), c.content)
			if err != nil {
				t.Fatal(err)
			}
			if iss.Session != c.want || ok != c.ok || iss.Bucket != bucket || iss.Length != 16 {
				t.Fatalf("issuance = %+v, %v; want session %s, %v", iss, ok, c.want, c.ok)
			}
		})
	}
	bad := entry(bound)
	bad.ContentHash = "sha256:C8B0"
	if _, _, err := issuance(keys, "run-1", bad, content); err == nil {
		t.Fatal("a malformed content hash gave an issuance")
	}
}

// TestIssuanceContentSessionOnly: an entry whose record says its session is
// bound to its content is checked under that session only, even when its
// delivered bytes under the older RUNID.POSITION session give the recorded
// hash: the record says which session was issued.
func TestIssuanceContentSessionOnly(t *testing.T) {
	keys, err := probe.DeriveKeys(bytes.Repeat([]byte{7}, probe.MasterSize))
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("Products can be refunded within 30 days.\n")
	out, err := keys.Deliver(content, probe.Issued{Session: "run-1.3", Bucket: 5988005, Length: 16})
	if err != nil {
		t.Fatal(err)
	}
	en := manifest.Entry{Position: 3, ContentHash: SHA256(content),
		Probe: &manifest.Probe{Bucket: 5988005, Length: 16, DeliveredHash: SHA256(out), DeliveredSize: int64(len(out)), Session: manifest.ProbeSessionContent}}
	iss, ok, err := issuance(keys, "run-1", en, content)
	if err != nil || ok || iss.Session != "run-1.3.cc8b0bb212e93151d720746e36ff3b707" {
		t.Fatalf("issuance = %+v, %v, %v; want the bound session, not reproduced", iss, ok, err)
	}
}
