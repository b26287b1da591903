package evidence

import (
	"bytes"
	"crypto/ed25519"
	"strings"
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

// TestParseTrustNamespaces: an allowed_signers line whose namespaces option
// limits its key (git's namespaces="git") vouches for no envelope unless the
// list admits readproof-evidence, and a warning names it; the line still
// vouches for commit signatures. Before session 29 (evaudit) every ed25519
// key of the file signed envelopes, whatever its namespaces.
func TestParseTrustNamespaces(t *testing.T) {
	t.Parallel()
	k := testKey(t, 1)
	now := time.Date(2026, 12, 5, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		file  string
		signs bool
	}{
		{`a@x namespaces="git" ` + k.AuthorizedKey(), false},
		{`a@x namespaces="file,git" ` + k.AuthorizedKey(), false},
		{`a@x namespaces="!readproof-evidence,*" ` + k.AuthorizedKey(), false},
		{`a@x namespaces="git,readproof-evidence" ` + k.AuthorizedKey(), true},
		{`a@x namespaces="readproof-*" ` + k.AuthorizedKey(), true},
		{`a@x namespaces="*" ` + k.AuthorizedKey(), true},
		// an empty list admits no namespace, as in ssh-keygen: `ssh-keygen
		// -Y verify -f allowed -I a@x -n readproof-evidence -s m.sig < m`
		// with this line says "key is not permitted for use in signature
		// namespace" (before session 29's follow-up it was no limit)
		{`a@x namespaces="" ` + k.AuthorizedKey(), false},
		{`a@x ` + k.AuthorizedKey(), true},
		{`a@x namespaces="git" ` + k.AuthorizedKey() + "\nb@x " + k.AuthorizedKey(), true},
		// a line that is not allowed_signers throughout: the
		// allowed_signers line still limits its key
		{`a@x namespaces="git" ` + k.AuthorizedKey() + "\n" + testKey(t, 2).AuthorizedKey(), false},
	} {
		keys, signers, warnings, err := ParseTrust([]byte(tc.file), now)
		if err != nil {
			t.Fatalf("%q: %v", tc.file, err)
		}
		signs := false
		for _, key := range keys {
			signs = signs || key.Equal(k.Public)
		}
		if signs != tc.signs {
			t.Errorf("%q: signs envelopes %v, want %v", tc.file, signs, tc.signs)
		}
		if !tc.signs && (len(warnings) == 0 || !strings.Contains(warnings[0].Why, `does not admit "readproof-evidence"`)) {
			t.Errorf("%q: warnings %+v", tc.file, warnings)
		}
		if len(signers) == 0 {
			t.Errorf("%q: no signer for commit signatures", tc.file)
		}
	}
}
