package evidence

import (
	"bytes"
	"crypto/ed25519"
	"encoding/hex"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/secure-systems-lab/go-securesystemslib/dsse"
	"golang.org/x/crypto/ssh"
)

func FuzzVerify(f *testing.F) {
	k := testKey(f, 1)
	in, _ := threeInput(f)
	good := mustBundle(f, in)
	signed, _ := Sign(good, k.PrivateKey())
	v03, _ := os.ReadFile("testdata/v03-bundle.json")
	for _, seed := range [][]byte{good, signed, v03, []byte("{}"), []byte(`{"payload":"e30=","payloadType":"x","signatures":[{"sig":"AAAA"}]}`), []byte("null"), []byte(`{"predicate":{"entries":[{"position":4294967296}]}}`)} {
		f.Add(seed)
	}
	trusted := []ed25519.PublicKey{k.Public}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Verify(data, VerifyOptions{Offline: true, TrustedKeys: trusted})
		if err != nil {
			t.Fatalf("offline Verify returned an error: %v", err)
		}
		_ = r.Listing()
		_ = r.Summary()
		if !r.OK() {
			if r.Err() == nil {
				t.Fatal("failing report without Err")
			}
			return
		}
		// Whatever passed must really be consistent: recompute
		// independently of the report.
		st := r.Statement
		leaves := make([][32]byte, len(st.Predicate.Entries))
		for i, e := range st.Predicate.Entries {
			if e.Position != i {
				t.Fatalf("passed with entry %d at position %d", i, e.Position)
			}
			leaves[i] = Leaf(uint32(i), e.URI, e.ContentHash)
		}
		root := Root(leaves)
		if hex.EncodeToString(root[:]) != st.Subject[0].Digest["sha256"] {
			t.Fatal("passed with a subject digest that is not the root")
		}
		if r.Signed && r.Signer != k.Fingerprint() {
			t.Fatal("signed bundle passed without the trusted signer")
		}
	})
}

func FuzzParseAllowedSigners(f *testing.F) {
	k := testKey(f, 1).AuthorizedKey()
	for _, seed := range []string{
		"alice@example.com " + k,
		`"a b",c namespaces="git",valid-after="20250101",valid-before="20260101Z" ` + k + " comment",
		"# only a comment\n\n",
		`x cert-authority ` + k,
		`x namespaces="a\"b" ` + k,
		`"unterminated ` + k,
		"x valid-before=\"20250101UTC\" " + k + "\r\n",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		signers, err := ParseAllowedSigners(data)
		if err != nil {
			return
		}
		for _, s := range signers {
			if s.Key == nil || s.Line < 1 || s.Principals == "" {
				t.Fatalf("parsed an incomplete signer %+v", s)
			}
			if !s.ValidAfter.IsZero() && !s.ValidBefore.IsZero() && !s.ValidBefore.After(s.ValidAfter) {
				t.Fatalf("accepted an empty validity window %+v", s)
			}
		}
		if len(signers) > 0 {
			_, _ = signers.principalFor(signers[0].Key, GitNamespace, time.Unix(commitTime, 0))
		}
	})
}

// parsePAE inverts PAE; FuzzPAE uses it to show the encoding is injective.
func parsePAE(b []byte) (string, []byte, bool) {
	s, ok := bytes.CutPrefix(b, []byte("DSSEv1 "))
	if !ok {
		return "", nil, false
	}
	field := func() ([]byte, bool) {
		sp := bytes.IndexByte(s, ' ')
		if sp < 0 {
			return nil, false
		}
		n, err := strconv.Atoi(string(s[:sp]))
		if err != nil || n < 0 || sp+1+n > len(s) {
			return nil, false
		}
		v := s[sp+1 : sp+1+n]
		s = s[sp+1+n:]
		return v, true
	}
	typ, ok := field()
	if !ok || len(s) == 0 || s[0] != ' ' {
		return "", nil, false
	}
	s = s[1:]
	body, ok := field()
	if !ok || len(s) != 0 {
		return "", nil, false
	}
	return string(typ), body, true
}

func FuzzPAE(f *testing.F) {
	f.Add("http://example.com/HelloWorld", []byte("hello world"))
	f.Add("", []byte{})
	f.Add("a b 3", []byte(" 1 x"))
	f.Add(PayloadType, []byte("{}\n"))
	f.Fuzz(func(t *testing.T, typ string, body []byte) {
		got := PAE(typ, body)
		if !bytes.Equal(got, dsse.PAE(typ, body)) {
			t.Fatalf("PAE(%q, %q) = %q, reference library says %q", typ, body, got, dsse.PAE(typ, body))
		}
		pt, pb, ok := parsePAE(got)
		if !ok || pt != typ || !bytes.Equal(pb, body) {
			t.Fatalf("PAE(%q, %q) = %q does not parse back", typ, body, got)
		}
	})
}

func FuzzParsePublicKeys(f *testing.F) {
	k := testKey(f, 1)
	f.Add(k.PublicPEM())
	f.Add([]byte(k.AuthorizedKey()))
	f.Add([]byte(k.AllowedSignersLine("a") + "\n# x\n"))
	f.Add([]byte("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParsePublicKeys(data)
		if err == nil && len(keys) == 0 {
			t.Fatal("no error and no keys")
		}
		for _, key := range keys {
			if len(key) != ed25519.PublicKeySize {
				t.Fatalf("key of %d bytes", len(key))
			}
		}
	})
}

func FuzzSplitSignedCommit(f *testing.F) {
	k := testKey(f, 1)
	f.Add(signedCommit(f, k, "m\n"))
	f.Add(rawCommit("unsigned\n"))
	f.Add([]byte("gpgsig x\n y\ncommitter a <b> 1 +0000\n\nmsg"))
	signers, _ := ParseAllowedSigners([]byte(k.AllowedSignersLine("a")))
	f.Fuzz(func(t *testing.T, raw []byte) {
		payload, armor, when, err := SplitSignedCommit(raw)
		if err != nil {
			return
		}
		header := payload
		if i := bytes.Index(payload, []byte("\n\n")); i >= 0 {
			header = payload[:i+1]
		}
		if bytes.HasPrefix(header, []byte("gpgsig ")) || bytes.Contains(header, []byte("\ngpgsig ")) {
			t.Fatal("payload still carries a gpgsig header")
		}
		_ = VerifyCommitSignature(payload, armor, signers, when)
	})
}

func FuzzVerifyCommitSignature(f *testing.F) {
	k := testKey(f, 1)
	payload := rawCommit("m\n")
	armor, _ := SignCommit(payload, k)
	f.Add(armor)
	f.Add(strings.Replace(armor, "A", "B", 1))
	f.Add("-----BEGIN SSH SIGNATURE-----\n-----END SSH SIGNATURE-----")
	signers, _ := ParseAllowedSigners([]byte(k.AllowedSignersLine("a")))
	f.Fuzz(func(t *testing.T, armor string) {
		err := VerifyCommitSignature(payload, armor, signers, time.Unix(commitTime, 0))
		if err == nil {
			sig, perr := unarmorSSHSig(armor)
			if perr != nil || sig.Namespace != GitNamespace || ssh.FingerprintSHA256(sig.PublicKey) != k.Fingerprint() {
				t.Fatal("accepted a signature that is not alice's git signature")
			}
		}
	})
}
