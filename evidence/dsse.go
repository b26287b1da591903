package evidence

import (
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"

	"golang.org/x/crypto/ssh"
)

// PayloadType is the DSSE payloadType of a signed bundle.
const PayloadType = "application/vnd.in-toto+json"

// Envelope is a DSSE envelope. Field order is the order Sign writes.
type Envelope struct {
	Payload     string              `json:"payload"`
	PayloadType string              `json:"payloadType"`
	Signatures  []EnvelopeSignature `json:"signatures"`
}

// EnvelopeSignature is one DSSE signature. KeyID is an unauthenticated hint.
type EnvelopeSignature struct {
	KeyID string `json:"keyid"`
	Sig   string `json:"sig"`
}

// PAE is the DSSE pre-authentication encoding that is signed:
// "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal.
func PAE(payloadType string, payload []byte) []byte {
	b := make([]byte, 0, len("DSSEv1 ")+len(payloadType)+len(payload)+42)
	return append(paeHead(b, payloadType, len(payload)), payload...)
}

// paeHead appends PAE's bytes before a body of n bytes to b.
func paeHead(b []byte, payloadType string, n int) []byte {
	b = append(b, "DSSEv1 "...)
	b = strconv.AppendInt(b, int64(len(payloadType)), 10)
	b = append(b, ' ')
	b = append(b, payloadType...)
	b = append(b, ' ')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, ' ')
}

// decodePAE decodes the base64 text of a payload (decodeB64To) straight
// into the tail of PAE(payloadType, payload): the signature check then
// needs no copy of the payload, which is a signed bundle's whole
// statement. It returns PAE's bytes and the payload, a slice of them.
func decodePAE(payloadType string, src []byte) (pae, payload []byte, err error) {
	most := maxDecodedLen(len(src))
	at := len(paeHead(nil, payloadType, most))
	buf := make([]byte, at+most)
	n, ok := decodeB64To(buf[at:], src)
	if !ok {
		return nil, nil, fmt.Errorf("not base64")
	}
	head := paeHead(buf[:0], payloadType, n) // never longer than at
	if len(head) < at {
		copy(buf[len(head):], buf[at:at+n])
	}
	return buf[:len(head)+n], buf[len(head) : len(head)+n], nil
}

// Sign wraps payload (the exact statement bytes) in a DSSE envelope signed
// with key. The keyid is the key's OpenSSH SHA256 fingerprint.
func Sign(payload []byte, key ed25519.PrivateKey) ([]byte, error) {
	if len(key) != ed25519.PrivateKeySize {
		return nil, fmt.Errorf("%w: signing key has %d bytes, want an ed25519 private key", ErrUnsupportedKey, len(key))
	}
	pub := key.Public().(ed25519.PublicKey)
	env := Envelope{
		Payload:     base64.StdEncoding.EncodeToString(payload),
		PayloadType: PayloadType,
		Signatures: []EnvelopeSignature{{
			KeyID: Fingerprint(pub),
			Sig:   base64.StdEncoding.EncodeToString(ed25519.Sign(key, PAE(PayloadType, payload))),
		}},
	}
	out, err := json.Marshal(env)
	if err != nil {
		return nil, fmt.Errorf("%w: encoding envelope: %v", ErrEnvelope, err)
	}
	return append(out, '\n'), nil
}

// Fingerprint is the OpenSSH SHA256 fingerprint of an ed25519 public key,
// "SHA256:<unpadded base64>", as `ssh-keygen -l` prints it.
func Fingerprint(pub ed25519.PublicKey) string {
	k, err := ssh.NewPublicKey(pub)
	if err != nil {
		return ""
	}
	return ssh.FingerprintSHA256(k)
}

// decodeB64 accepts standard and URL-safe base64, padded or not, as DSSE
// allows (decodeB64To).
func decodeB64(s string) ([]byte, error) {
	b := make([]byte, maxDecodedLen(len(s)))
	n, ok := decodeB64To(b, []byte(s))
	if !ok {
		return nil, fmt.Errorf("not base64")
	}
	return b[:n], nil
}

// decodeB64To decodes src into dst, which holds maxDecodedLen(len(src))
// bytes, with the first of standard and URL-safe base64, padded or not,
// that decodes it, and returns the bytes written.
func decodeB64To(dst, src []byte) (int, bool) {
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if n, err := enc.Decode(dst, src); err == nil {
			return n, true
		}
	}
	return 0, false
}

// maxDecodedLen is the most decodeB64To's encodings decode from n bytes.
func maxDecodedLen(n int) int { return base64.RawStdEncoding.DecodedLen(n) }

// OpenedEnvelope is the outcome of opening an envelope.
type OpenedEnvelope struct {
	// Payload is the exact signed bytes.
	Payload     []byte
	PayloadType string
	// Signer is the fingerprint of the trusted key whose signature verified,
	// "" when none did.
	Signer string
	// SigErr says why no signature verified (nil when one did).
	SigErr error
}

// OpenEnvelope decodes a DSSE envelope and verifies its signatures over the
// exact payload bytes against the trusted keys; keyids are only hints. A
// malformed envelope is an error (ErrEnvelope); a signature that does not
// verify is reported in SigErr (ErrBadSignature or ErrUntrustedKey), so the
// caller can still inspect the payload.
func OpenEnvelope(data []byte, trusted []ed25519.PublicKey) (*OpenedEnvelope, error) {
	var env rawEnvelope
	if err := json.Unmarshal(data, &env); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrEnvelope, err)
	}
	return env.open(trusted)
}

type rawEnvelope struct {
	Payload     *string             `json:"payload"`
	PayloadType *string             `json:"payloadType"`
	Signatures  []EnvelopeSignature `json:"signatures"`

	// payloadB64 is the payload's text when Verify's decoder left
	// *Payload empty: a slice of the bundle, not a copy.
	payloadB64 []byte
}

func (env *rawEnvelope) present() bool {
	return env.Payload != nil || env.PayloadType != nil || env.Signatures != nil
}

func (env *rawEnvelope) open(trusted []ed25519.PublicKey) (*OpenedEnvelope, error) {
	if env.Payload == nil || env.PayloadType == nil {
		return nil, fmt.Errorf("%w: payload or payloadType missing", ErrEnvelope)
	}
	text := env.payloadB64
	if len(text) == 0 {
		text = []byte(*env.Payload) // encoding/json decoded the envelope
	}
	pae, payload, err := decodePAE(*env.PayloadType, text)
	if err != nil {
		return nil, fmt.Errorf("%w: payload is not base64", ErrEnvelope)
	}
	out := &OpenedEnvelope{Payload: payload, PayloadType: *env.PayloadType}
	out.Signer, out.SigErr = verifyEnvelopeSignatures(pae, env.Signatures, trusted)
	return out, nil
}

// MaxEnvelopeSignatures bounds the signatures of an envelope a verifier
// checks. The envelope is the bundle author's: each signature shaped like
// one costs a full ed25519 verification per trusted key, and an envelope of
// gigabytes could carry millions. One is signed by a few keys.
const MaxEnvelopeSignatures = 32

// verifyEnvelopeSignatures checks sigs over pae, PAE(payloadType, payload).
func verifyEnvelopeSignatures(pae []byte, sigs []EnvelopeSignature, trusted []ed25519.PublicKey) (string, error) {
	if len(sigs) == 0 {
		return "", fmt.Errorf("%w: the envelope carries no signature", ErrBadSignature)
	}
	if len(sigs) > MaxEnvelopeSignatures {
		return "", fmt.Errorf("%w: the envelope carries %d signatures, more than the %d a verifier checks", ErrBadSignature, len(sigs), MaxEnvelopeSignatures)
	}
	var keys []ed25519.PublicKey
	for _, k := range trusted {
		if len(k) == ed25519.PublicKeySize {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return "", fmt.Errorf("%w: no trusted public key was given to check the envelope signature against: pass the signer's public key", ErrUntrustedKey)
	}
	malformed := 0
	for _, s := range sigs {
		sig, err := decodeB64(s.Sig)
		if err != nil || len(sig) != ed25519.SignatureSize {
			malformed++
			continue
		}
		for _, k := range keys {
			if ed25519.Verify(k, pae, sig) {
				return Fingerprint(k), nil
			}
		}
	}
	if malformed == len(sigs) {
		return "", fmt.Errorf("%w: no signature in the envelope is a base64 ed25519 signature", ErrBadSignature)
	}
	hint := ""
	for _, s := range sigs {
		if s.KeyID != "" {
			hint = fmt.Sprintf(" (keyid hint %s)", s.KeyID)
			break
		}
	}
	return "", fmt.Errorf("%w: %d signature(s)%s checked against %d trusted key(s), none verifies: the payload or its type was changed, or it was signed by another key",
		ErrBadSignature, len(sigs), hint, len(keys))
}
