package evidence

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// TestEnvelopeSignatureBound: an envelope is the bundle's author's, and so
// is the number of signatures in it. Each one that is shaped like an ed25519
// signature (a point R and a canonical S) costs a full verification per
// trusted key, so 100,000 of them in an 11 MB envelope took 8.8 s (a 4 GiB
// one, hours; times the trusted keys). A verifier checks at most
// MaxEnvelopeSignatures; more are refused, the good one among them or not.
func TestEnvelopeSignatureBound(t *testing.T) {
	t.Parallel()
	k := testKey(t, 6)
	signed, err := Sign([]byte("hello"), k.PrivateKey())
	if err != nil {
		t.Fatal(err)
	}
	var env Envelope
	if err := json.Unmarshal(signed, &env); err != nil {
		t.Fatal(err)
	}
	good := env.Signatures[0]
	raw, _ := base64.StdEncoding.DecodeString(good.Sig)
	forged := func(n int) []EnvelopeSignature {
		var sigs []EnvelopeSignature
		for i := range n {
			s := append([]byte(nil), raw[:32]...) // a valid point R
			s = binary.LittleEndian.AppendUint64(s, uint64(i+1))
			s = append(s, make([]byte, 24)...) // a canonical S
			sigs = append(sigs, EnvelopeSignature{KeyID: good.KeyID, Sig: base64.StdEncoding.EncodeToString(s)})
		}
		return sigs
	}
	open := func(sigs []EnvelopeSignature) *OpenedEnvelope {
		env.Signatures = sigs
		data, _ := json.Marshal(env)
		o, err := OpenEnvelope(data, []ed25519.PublicKey{k.Public})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	// up to the bound, the good signature is found wherever it is
	if o := open(append(forged(MaxEnvelopeSignatures-1), good)); o.SigErr != nil || o.Signer != k.Fingerprint() {
		t.Fatalf("%d signatures, the good one last: %v", MaxEnvelopeSignatures, o.SigErr)
	}
	o := open(append(forged(MaxEnvelopeSignatures), good))
	if !errors.Is(o.SigErr, ErrBadSignature) || !strings.Contains(o.SigErr.Error(), "more than the 32 a verifier checks") {
		t.Fatalf("%d signatures, the good one last: signer %q, error %v; want refused", MaxEnvelopeSignatures+1, o.Signer, o.SigErr)
	}
}
