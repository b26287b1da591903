package evidence

import (
	"bytes"
	"crypto/ed25519"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
)

// FuzzParseTrust: whatever the file, ParseTrust either fails or returns
// envelope keys that are ed25519 keys the signers vouch for (each names a
// signer line), and a key left out of the envelope keys for its window is
// named by a warning; it never panics.
func FuzzParseTrust(f *testing.F) {
	k, o := testKey(f, 1), testKey(f, 2)
	f.Add(k.PublicPEM())
	f.Add([]byte(k.AuthorizedKey()))
	f.Add([]byte(k.AllowedSignersLine("a") + "\n" + o.AuthorizedKey()))
	f.Add([]byte(k.AllowedSignersLine("a") + "\n# x\n"))
	f.Add([]byte("a@x valid-before=\"20200101\" " + k.AuthorizedKey()))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, signers, warnings, err := ParseTrust(data, now)
		if err != nil {
			if keys != nil || signers != nil || warnings != nil {
				t.Fatal("an error with results")
			}
			return
		}
		for _, key := range keys {
			if len(key) != ed25519.PublicKeySize {
				t.Fatalf("key of %d bytes", len(key))
			}
			pub, err := ssh.NewPublicKey(key)
			if err != nil {
				t.Fatal(err)
			}
			named := false
			for _, s := range signers {
				named = named || bytes.Equal(s.Key.Marshal(), pub.Marshal())
			}
			if !named {
				t.Fatal("an envelope key no signer vouches for")
			}
		}
		for _, w := range warnings {
			if w.Why == "" || w.Line < 1 {
				t.Fatalf("warning %+v", w)
			}
		}
	})
}
