package receipts

import (
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/readproof/readproof/internal/keyfile"
)

// KeySize is the size of a key file: 32 random bytes, nothing else.
const KeySize = 32

// HKDF parameters (docs/receipts.md, "Keys"). The key file is the HKDF input
// keying material; the MAC key and the key id come from different info
// strings, so publishing the key id reveals nothing about the MAC key.
const (
	hkdfSalt     = "readproof receipts v1"
	hkdfInfoMAC  = "receipt mac key"
	hkdfInfoID   = "receipt key id"
	keyIDLen     = 16 // hex digits: 8 bytes of HKDF output
	keyIDByteLen = keyIDLen / 2
)

var (
	// ErrKeyPath is returned for a key path inside a forbidden directory
	// (a repository or the store).
	ErrKeyPath = errors.New("key file inside a forbidden directory")
	// ErrKeyInsecure is returned by LoadKey for a key file that group or
	// other users can read or write.
	ErrKeyInsecure = errors.New("key file readable by other users")
	// ErrKeyFormat is returned for a key file that is not exactly 32 bytes.
	ErrKeyFormat = errors.New("malformed key file")
)

// Key is a derived receipt key: the HMAC subkey and its public id. The key
// file's bytes are not kept. A Key prints as its id only, and the subkey sits
// behind a pointer so that printing a struct holding a Key (where fmt cannot
// call Key's methods) shows an address, not key bytes.
type Key struct {
	secret *keySecret
	id     string
}

type keySecret struct{ mac []byte }

// NewKey derives a Key from 32 bytes of key material (the content of a key
// file).
func NewKey(secret []byte) (Key, error) {
	if len(secret) != KeySize {
		return Key{}, fmt.Errorf("%w: key material is %d bytes, want %d", ErrKeyFormat, len(secret), KeySize)
	}
	mac, err := hkdf.Key(sha256.New, secret, []byte(hkdfSalt), hkdfInfoMAC, sha256.Size)
	if err != nil {
		return Key{}, fmt.Errorf("deriving the receipt MAC key: %w", err)
	}
	idb, err := hkdf.Key(sha256.New, secret, []byte(hkdfSalt), hkdfInfoID, keyIDByteLen)
	if err != nil {
		return Key{}, fmt.Errorf("deriving the receipt key id: %w", err)
	}
	return Key{secret: &keySecret{mac: mac}, id: hex.EncodeToString(idb)}, nil
}

// ID is the key's public fingerprint, 16 lower-case hex digits. It is
// recorded in every receipt the key makes.
func (k Key) ID() string { return k.id }

// IsZero reports whether k is the zero Key (no key loaded).
func (k Key) IsZero() bool { return k.secret == nil }

// String prints the key id, never key material.
func (k Key) String() string { return "receipts.Key(" + k.id + ")" }

// GoString prints the key id, never key material.
func (k Key) GoString() string { return k.String() }

// Format prints the key id for every verb, so %x or %v of a Key cannot leak
// the MAC key.
func (k Key) Format(f fmt.State, verb rune) { _, _ = io.WriteString(f, k.String()) }

func (k Key) sum(r Receipt) Digest {
	m := hmac.New(sha256.New, k.secret.mac)
	m.Write(r.macInput())
	var d Digest
	copy(d[:], m.Sum(nil))
	return d
}

// Seal sets r.KeyID to k's id and r.MAC to the MAC of r's fields. It
// validates r first.
func (k Key) Seal(r Receipt) (Receipt, error) {
	if k.IsZero() {
		return Receipt{}, errors.New("sealing a receipt: no key loaded (use LoadKey or NewKey)")
	}
	r.KeyID = k.id
	if err := r.Validate(); err != nil {
		return Receipt{}, err
	}
	r.MAC = k.sum(r)
	return r, nil
}

// Verify checks r's MAC under key. A receipt made under another key (its
// KeyID differs) yields an error wrapping ErrUnknownKey: a rotated key is
// not evidence of tampering. A receipt with malformed fields or a MAC that
// does not match yields an error wrapping ErrTampered.
func Verify(r Receipt, key Key) error {
	if key.IsZero() {
		return errors.New("verifying a receipt: no key loaded (use LoadKey or NewKey)")
	}
	if r.KeyID != key.id {
		return fmt.Errorf("receipt %s: made under key %s, verifying with key %s: %w (supply the key it was issued with)",
			truncate(r.ID, 80), truncate(r.KeyID, 32), key.id, ErrUnknownKey)
	}
	if err := r.Validate(); err != nil {
		return fmt.Errorf("%w: %v", ErrTampered, err)
	}
	want := key.sum(r)
	if !hmac.Equal(want[:], r.MAC[:]) {
		return fmt.Errorf("receipt %s: %w", r.ID, ErrTampered)
	}
	return nil
}

func validKeyID(s string) bool {
	if len(s) != keyIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// keyKind is the key-file policy for receipt keys (internal/keyfile).
var keyKind = keyfile.Kind{
	Name:     "receipt key",
	Location: ErrKeyPath,
	Mode:     ErrKeyInsecure,
	Invalid:  ErrKeyFormat,
}

// CreateKey writes a new key file at path: 32 bytes from crypto/rand, mode
// 0600, fsynced, placed atomically. The directory must exist. It refuses to
// overwrite an existing file (fs.ErrExist) and refuses a path inside any of
// the forbidden directories or inside a git repository (ErrKeyPath),
// symlinks resolved, so a key never lands in a repository or the store.
func CreateKey(path string, forbidden ...string) error {
	secret := make([]byte, KeySize)
	defer clear(secret)
	if _, err := rand.Read(secret); err != nil {
		return fmt.Errorf("creating receipt key %q: reading randomness: %w", path, err)
	}
	err := keyKind.Write(path, forbidden, secret, keyfile.WriteOptions{Mode: 0o600})
	if errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%w (receipts made under it would become unverifiable if it were replaced)", err)
	}
	return err
}

// CheckKeyLocation applies CreateKey's location check alone, so a caller can
// refuse a key path before it creates anything.
func CheckKeyLocation(path string, forbidden ...string) error {
	_, err := keyKind.CheckLocation(path, forbidden)
	return err
}

// LoadKey reads and derives a key file. It refuses a file inside a forbidden
// directory or a git repository (ErrKeyPath), a file group or other users
// may read or write (ErrKeyInsecure; fix with chmod 600), anything but a
// regular file, and a file that is not exactly 32 bytes (ErrKeyFormat). A
// missing file is an error wrapping fs.ErrNotExist.
func LoadKey(path string, forbidden ...string) (Key, error) {
	secret, err := keyKind.Read(path, forbidden, KeySize)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return Key{}, fmt.Errorf("%w (create one with `readproof receipts key init`)", err)
		}
		return Key{}, err
	}
	defer clear(secret)
	if len(secret) != KeySize {
		return Key{}, fmt.Errorf("loading receipt key %q: %w: %d bytes, want exactly %d", path, ErrKeyFormat, len(secret), KeySize)
	}
	return NewKey(secret)
}
