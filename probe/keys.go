package probe

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"time"
)

// Protocol constants. They are part of the wire format: changing any of them
// changes every sentinel, so a change needs a new protocol version.
const (
	// Label starts every framed MAC input and names the protocol version.
	Label = "readproof-probe-v1"
	// HKDFSalt is the HKDF-Extract salt used to split the master secret.
	HKDFSalt = "readproof/probe/v1/hkdf-salt"
	// InfoSentinel is the HKDF-Expand info string of the sentinel subkey.
	InfoSentinel = "readproof/probe/v1/sentinel-key"
	// InfoAudit is the HKDF-Expand info string of the audit subkey.
	InfoAudit = "readproof/probe/v1/audit-key"
	// InfoVerdict is the HKDF-Expand info string of the verdict-record subkey.
	InfoVerdict = "readproof/probe/v1/verdict-key"
	// ClientLabel starts the MAC input that pepper-hashes a client address.
	ClientLabel = "readproof/probe/v1/client"

	// MasterSize is the size of the master secret in bytes.
	MasterSize = 32
	// BucketSeconds is the width of one time bucket.
	BucketSeconds = 300
	// MinLength, MaxLength and DefaultLength bound the truncated MAC length in bytes.
	MinLength     = 16
	MaxLength     = 32
	DefaultLength = 16
	// ClientHashSize is the number of MAC bytes kept (hex encoded) for a client address.
	ClientHashSize = 16
)

// Errors returned at the package boundary; match them with errors.Is.
var (
	// ErrKeySize: a master secret that is not MasterSize bytes.
	ErrKeySize = errors.New("probe master secret must be 32 bytes")
	// ErrLength: a sentinel length outside MinLength..MaxLength.
	ErrLength = errors.New("invalid probe sentinel length")
	// ErrBucket: a negative time bucket (a clock before 1970).
	ErrBucket = errors.New("invalid probe time bucket")
)

// encoding is the sentinel text encoding: base64url without padding, strict
// about the unused trailing bits so that each byte string has one encoding.
var encoding = base64.RawURLEncoding.Strict()

// Keys holds the three subkeys derived from one master secret. The zero value
// is not usable; build Keys with DeriveKeys or NewRandomKeys. Keys never
// print their contents: every fmt verb renders "probe.Keys{redacted}".
type Keys struct {
	sentinel [32]byte
	audit    [32]byte
	verdict  [32]byte
	ok       bool
}

// DeriveKeys splits a 32-byte master secret into the sentinel, audit and
// verdict subkeys with HKDF-SHA256 (PROBE_PROTOCOL.md §3). The master secret is not
// retained. It returns ErrKeySize for any other length.
func DeriveKeys(master []byte) (Keys, error) {
	if len(master) != MasterSize {
		return Keys{}, fmt.Errorf("%w: got %d bytes", ErrKeySize, len(master))
	}
	var k Keys
	s, err := hkdf.Key(sha256.New, master, []byte(HKDFSalt), InfoSentinel, 32)
	if err != nil {
		return Keys{}, fmt.Errorf("derive probe sentinel subkey: %w", err)
	}
	a, err := hkdf.Key(sha256.New, master, []byte(HKDFSalt), InfoAudit, 32)
	if err != nil {
		return Keys{}, fmt.Errorf("derive probe audit subkey: %w", err)
	}
	v, err := hkdf.Key(sha256.New, master, []byte(HKDFSalt), InfoVerdict, 32)
	if err != nil {
		return Keys{}, fmt.Errorf("derive probe verdict subkey: %w", err)
	}
	copy(k.sentinel[:], s)
	copy(k.audit[:], a)
	copy(k.verdict[:], v)
	clear(s)
	clear(a)
	clear(v)
	k.ok = true
	return k, nil
}

// NewRandomKeys derives Keys from a fresh master secret read from
// crypto/rand. The master secret exists only inside this call; this is the
// process-scoped secret of the probe server.
func NewRandomKeys() (Keys, error) {
	master := make([]byte, MasterSize)
	if _, err := io.ReadFull(rand.Reader, master); err != nil {
		return Keys{}, fmt.Errorf("read random probe secret: %w", err)
	}
	defer clear(master)
	return DeriveKeys(master)
}

// String, GoString and Format keep subkeys out of logs and error messages.
func (k Keys) String() string { return "probe.Keys{redacted}" }

// GoString implements fmt.GoStringer.
func (k Keys) GoString() string { return k.String() }

// Format implements fmt.Formatter for every verb.
func (k Keys) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, k.String()) }

// Valid reports whether k was built by DeriveKeys or NewRandomKeys.
func (k Keys) Valid() bool { return k.ok }

// Bucket returns floor(unix seconds of t / 300). It is negative only for
// times before 1970-01-01T00:00:00Z, which the protocol refuses.
func Bucket(t time.Time) int64 {
	s := t.Unix() // floor of the real time in seconds
	b := s / BucketSeconds
	if s%BucketSeconds < 0 {
		b--
	}
	return b
}

// BucketStart returns the first instant of bucket b.
func BucketStart(b int64) time.Time { return time.Unix(b*BucketSeconds, 0).UTC() }

// EncodedLength returns the length in characters of a sentinel of n bytes.
func EncodedLength(n int) int { return encoding.EncodedLen(n) }

func checkLength(n int) error {
	if n < MinLength || n > MaxLength {
		return fmt.Errorf("%w: %d bytes (want %d to %d)", ErrLength, n, MinLength, MaxLength)
	}
	return nil
}

// frame appends the injective MAC input for (bucket, session) to dst:
// Label || 0x00 || int64be(bucket) || int32be(len(session)) || session.
func frame(dst []byte, session string, bucket int64) []byte {
	dst = append(dst, Label...)
	dst = append(dst, 0)
	dst = binary.BigEndian.AppendUint64(dst, uint64(bucket))
	dst = binary.BigEndian.AppendUint32(dst, uint32(len(session)))
	return append(dst, session...)
}

// Framed returns the MAC input for (session, bucket); exported for test
// vectors and for other implementations to compare against.
func Framed(session string, bucket int64) []byte { return frame(nil, session, bucket) }

// macer computes sentinel MACs with one reusable HMAC state.
type macer struct {
	h   hash.Hash
	buf []byte
	sum []byte
}

func (k *Keys) newMacer() *macer {
	return &macer{h: hmac.New(sha256.New, k.sentinel[:]), buf: make([]byte, 0, 256), sum: make([]byte, 0, sha256.Size)}
}

// mac returns the full 32-byte MAC; the slice is reused by the next call.
func (m *macer) mac(session string, bucket int64) []byte {
	m.buf = frame(m.buf[:0], session, bucket)
	m.h.Reset()
	m.h.Write(m.buf)
	m.sum = m.h.Sum(m.sum[:0])
	return m.sum
}

// MAC returns the full HMAC-SHA256 over the framed (session, bucket), before
// truncation. It exists for test vectors; use Sentinel for everything else.
func (k Keys) MAC(session string, bucket int64) ([]byte, error) {
	if err := k.checkInputs(session, bucket, DefaultLength); err != nil {
		return nil, err
	}
	return append([]byte(nil), k.newMacer().mac(session, bucket)...), nil
}

// Sentinel returns the sentinel of session for bucket: the first n bytes of
// the MAC, base64url without padding. n must be MinLength..MaxLength.
func (k Keys) Sentinel(session string, bucket int64, n int) (string, error) {
	if err := k.checkInputs(session, bucket, n); err != nil {
		return "", err
	}
	return encoding.EncodeToString(k.newMacer().mac(session, bucket)[:n]), nil
}

func (k *Keys) checkInputs(session string, bucket int64, n int) error {
	if !k.ok {
		return errors.New("probe keys not initialised: build them with DeriveKeys or NewRandomKeys")
	}
	if err := ValidateSession(session); err != nil {
		return err
	}
	if bucket < 0 {
		return fmt.Errorf("%w: bucket %d is before 1970; check the system clock", ErrBucket, bucket)
	}
	return checkLength(n)
}

// decodeSentinel decodes a reported value that must be exactly the strict
// unpadded base64url encoding of n bytes.
func decodeSentinel(s string, n int) ([]byte, bool) {
	if len(s) != encoding.EncodedLen(n) {
		return nil, false
	}
	b, err := encoding.DecodeString(s)
	if err != nil || len(b) != n {
		return nil, false
	}
	return b, true
}

// ClientHash pepper-hashes a client address with the audit subkey:
// hex(first 16 bytes of HMAC-SHA256(audit, ClientLabel || 0x00 || addr)).
// The hash links requests from one address within one key's lifetime and
// reveals nothing about the address to anyone without the audit subkey.
func (k Keys) ClientHash(addr string) string {
	h := hmac.New(sha256.New, k.audit[:])
	h.Write([]byte(ClientLabel))
	h.Write([]byte{0})
	h.Write([]byte(addr))
	return hex.EncodeToString(h.Sum(nil)[:ClientHashSize])
}
