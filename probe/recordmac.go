package probe

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"strings"
)

// Verdict records (PROBE_PROTOCOL.md §10.6). Each verdict record a store
// keeps carries a MAC under the verdict subkey, so that a record edited or
// forged by someone without the probe key is detected.
const (
	// RecordLabel is the first field of a verdict record's MAC input.
	RecordLabel = "readproof-verdict-record-v1"
	// KeyIDLabel is the message whose MAC names the verdict subkey.
	KeyIDLabel = "readproof/probe/v1/verdict-key-id"
	// RecordMACPrefix starts the text form of a record MAC.
	RecordMACPrefix = "hmac-sha256:"
)

// ErrRecordMAC is returned by CheckRecordMAC for a MAC that does not match.
var ErrRecordMAC = errors.New("verdict record MAC does not match")

// RecordInput builds the MAC input of a verdict record from its fields:
// RecordLabel, then each field, each as a 4-byte big-endian length followed
// by the field's bytes. The store defines which fields, in which order.
func RecordInput(fields ...string) []byte {
	n := 4 + len(RecordLabel)
	for _, f := range fields {
		n += 4 + len(f)
	}
	out := make([]byte, 0, n)
	for _, f := range append([]string{RecordLabel}, fields...) {
		out = binary.BigEndian.AppendUint32(out, uint32(len(f)))
		out = append(out, f...)
	}
	return out
}

// RecordKeyID names the verdict subkey without revealing it: hex of the
// first 8 bytes of HMAC-SHA256(verdict subkey, KeyIDLabel). A record whose
// key id differs was authenticated under another (rotated) key.
func (k Keys) RecordKeyID() string {
	if !k.ok {
		return ""
	}
	h := hmac.New(sha256.New, k.verdict[:])
	h.Write([]byte(KeyIDLabel))
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// RecordMAC returns "hmac-sha256:" and the hex of HMAC-SHA256(verdict
// subkey, input), input built with RecordInput.
func (k Keys) RecordMAC(input []byte) (string, error) {
	if !k.ok {
		return "", errors.New("probe keys not initialised: build them with DeriveKeys or NewRandomKeys")
	}
	h := hmac.New(sha256.New, k.verdict[:])
	h.Write(input)
	return RecordMACPrefix + hex.EncodeToString(h.Sum(nil)), nil
}

// CheckRecordMAC reports whether mac (text form) authenticates input under
// these keys, comparing in constant time. It returns ErrRecordMAC (wrapped)
// for a MAC that is malformed or does not match.
func (k Keys) CheckRecordMAC(input []byte, mac string) error {
	if !k.ok {
		return errors.New("probe keys not initialised: build them with DeriveKeys or NewRandomKeys")
	}
	hexPart, ok := strings.CutPrefix(mac, RecordMACPrefix)
	if !ok || len(hexPart) != 2*sha256.Size {
		return ErrRecordMAC
	}
	got, err := hex.DecodeString(hexPart)
	if err != nil {
		return ErrRecordMAC
	}
	h := hmac.New(sha256.New, k.verdict[:])
	h.Write(input)
	if !hmac.Equal(got, h.Sum(nil)) {
		return ErrRecordMAC
	}
	return nil
}
