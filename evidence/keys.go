package evidence

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/internal/keyfile"
)

// KeyComment is the comment CreateKey writes into new keys.
const KeyComment = "readproof-evidence"

// maxKeyFile bounds how much of a key file is read.
const maxKeyFile = 64 << 10

// Key is an ed25519 signing key. Its String and GoString show only the
// fingerprint: the private half never reaches output.
type Key struct {
	// Path is the private key file ("" for a key made in memory).
	Path string
	// Public is the public half.
	Public ed25519.PublicKey
	// Principal is the name the key was created for (`key init
	// --principal`), read from the file PrincipalPath(Path) beside the key;
	// "" when none was recorded.
	Principal string

	private ed25519.PrivateKey
}

// NewKey wraps an in-memory ed25519 private key.
func NewKey(priv ed25519.PrivateKey) (Key, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return Key{}, fmt.Errorf("%w: %d-byte private key, want ed25519", ErrUnsupportedKey, len(priv))
	}
	return Key{Public: priv.Public().(ed25519.PublicKey), private: priv}, nil
}

// PrivateKey returns the private half, for Sign and SignCommit.
func (k Key) PrivateKey() ed25519.PrivateKey { return k.private }

// Fingerprint is the OpenSSH SHA256 fingerprint of the public key.
func (k Key) Fingerprint() string { return Fingerprint(k.Public) }

// String shows the fingerprint only.
func (k Key) String() string { return "ed25519 key " + k.Fingerprint() }

// GoString shows the fingerprint only.
func (k Key) GoString() string { return "evidence.Key{" + k.Fingerprint() + "}" }

// AuthorizedKey is the public key in authorized_keys form,
// "ssh-ed25519 AAAA... readproof-evidence", without a newline.
func (k Key) AuthorizedKey() string {
	pub, err := ssh.NewPublicKey(k.Public)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(ssh.MarshalAuthorizedKey(pub))) + " " + KeyComment
}

// AllowedSignersLine is the public key as one allowed_signers line for
// principal (an e-mail-like name), ready for gpg.ssh.allowedSignersFile.
// A principal with spaces is quoted; quotes are dropped; "" becomes the
// key's recorded Principal, or "readproof" when it has none.
func (k Key) AllowedSignersLine(principal string) string {
	principal = strings.ReplaceAll(principal, `"`, "")
	if strings.TrimSpace(principal) == "" {
		principal = strings.ReplaceAll(k.Principal, `"`, "")
	}
	if strings.TrimSpace(principal) == "" {
		principal = "readproof"
	}
	if strings.ContainsAny(principal, " \t\r\n#") {
		principal = `"` + strings.NewReplacer("\r", "", "\n", "").Replace(principal) + `"`
	}
	return principal + " " + k.AuthorizedKey()
}

// PublicPEM is the public key as PKIX "PUBLIC KEY" PEM, the form openssl
// reads (OpenSSH 9.2 cannot export ed25519 keys this way).
func (k Key) PublicPEM() []byte {
	der, err := x509.MarshalPKIXPublicKey(k.Public)
	if err != nil {
		return nil
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// SignEnvelope is Sign with this key.
func (k Key) SignEnvelope(payload []byte) ([]byte, error) {
	if k.private == nil {
		return nil, fmt.Errorf("%w: key %s has no private half", ErrUnsupportedKey, k.Fingerprint())
	}
	return Sign(payload, k.private)
}

// DefaultKeyPath is where `readproof key init` puts the key by default:
// $XDG_CONFIG_HOME/readproof/evidence_ed25519 (os.UserConfigDir).
func DefaultKeyPath() (string, error) {
	p, err := keyfile.DefaultPath("evidence_ed25519")
	if err != nil {
		return "", fmt.Errorf("signing key: %w: pass a key path", err)
	}
	return p, nil
}

// keyKind is the key-file policy for signing keys (internal/keyfile).
var keyKind = keyfile.Kind{
	Name:     "signing key",
	Location: ErrKeyLocation,
	Mode:     ErrKeyPermissions,
	Invalid:  ErrUnsupportedKey,
	Exists:   ErrKeyExists,
}

// maxPrincipal bounds a recorded principal.
const maxPrincipal = 256

// PrincipalPath is the file beside a key that records its principal: one
// line, the name `key init --principal` was given.
func PrincipalPath(keyPath string) string { return keyPath + ".principal" }

// CreateKey makes a new ed25519 key and writes it to path as an OpenSSH
// private key (mode 0600), with the public key beside it in path+".pub"
// (authorized_keys form). It refuses a path inside any of the forbidden
// directories or inside a git repository (symlinks resolved; pass the store
// and the project) with ErrKeyLocation, and refuses to overwrite either file
// with ErrKeyExists.
func CreateKey(path string, forbidden ...string) (Key, error) {
	return CreateKeyFor(path, "", forbidden...)
}

// CreateKeyFor is CreateKey that also records principal (when not "") in
// PrincipalPath(path), so LoadKey returns it and AllowedSignersLine("")
// names it. A principal with a line break, a control character or a quote,
// or longer than 256 bytes, is refused with ErrInvalidInput.
func CreateKeyFor(path, principal string, forbidden ...string) (Key, error) {
	if err := checkPrincipal(principal); err != nil {
		return Key{}, err
	}
	if _, err := keyKind.CheckLocation(path, forbidden); err != nil {
		return Key{}, err
	}
	pubPath := path + ".pub"
	files := []string{path, pubPath}
	if principal != "" {
		files = append(files, PrincipalPath(path))
	}
	for _, p := range files {
		if err := keyKind.CheckAbsent(p); err != nil {
			return Key{}, err
		}
	}
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return Key{}, fmt.Errorf("generating an ed25519 key: %w", err)
	}
	key, _ := NewKey(priv)
	key.Path = path
	block, err := ssh.MarshalPrivateKey(priv, KeyComment)
	if err != nil {
		return Key{}, fmt.Errorf("encoding the private key: %w", err)
	}
	pemBytes := pem.EncodeToMemory(block)
	defer clear(pemBytes)
	if err := keyKind.Write(path, forbidden, pemBytes, keyfile.WriteOptions{Mode: 0o600, MkdirAll: true}); err != nil {
		return Key{}, err
	}
	if err := keyKind.Write(pubPath, forbidden, []byte(key.AuthorizedKey()+"\n"), keyfile.WriteOptions{Mode: 0o644}); err != nil {
		os.Remove(path)
		return Key{}, err
	}
	if principal != "" {
		if err := keyKind.Write(PrincipalPath(path), forbidden, []byte(principal+"\n"), keyfile.WriteOptions{Mode: 0o644}); err != nil {
			os.Remove(path)
			os.Remove(pubPath)
			return Key{}, err
		}
		key.Principal = principal
	}
	return key, nil
}

func checkPrincipal(p string) error {
	if len(p) > maxPrincipal {
		return fmt.Errorf("%w: principal is %d bytes, at most %d", ErrInvalidInput, len(p), maxPrincipal)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f || r == '"' || (r >= 0x80 && r < 0xa0) {
			return fmt.Errorf("%w: principal %q: no quotes, line breaks or control characters", ErrInvalidInput, p)
		}
	}
	if p != strings.TrimSpace(p) {
		return fmt.Errorf("%w: principal %q starts or ends with white space", ErrInvalidInput, p)
	}
	return nil
}

// readPrincipal returns the principal recorded beside the key at path, ""
// when there is no such file.
func readPrincipal(path string) (string, error) {
	pp := PrincipalPath(path)
	fi, err := os.Lstat(pp)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("signing key principal %s: %w", pp, err)
	}
	if !fi.Mode().IsRegular() || fi.Size() > maxPrincipal+2 {
		return "", fmt.Errorf("%w: %s is not a principal file (one line, at most %d bytes)", ErrUnsupportedKey, pp, maxPrincipal)
	}
	data, err := os.ReadFile(pp)
	if err != nil {
		return "", fmt.Errorf("signing key principal %s: %w", pp, err)
	}
	p := strings.TrimRight(string(data), "\r\n")
	if err := checkPrincipal(p); err != nil {
		return "", fmt.Errorf("%s: %w", pp, err)
	}
	return p, nil
}

// LoadKey reads an ed25519 private key: a file CreateKey wrote, an existing
// unencrypted OpenSSH ed25519 key, or PKCS#8 PEM. It refuses a path inside a
// forbidden directory or a git repository (ErrKeyLocation), a file readable
// or writable by group or others (ErrKeyPermissions), a passphrase-protected
// key (ErrEncryptedKey) and any other key type (ErrUnsupportedKey). A missing
// file is an error wrapping fs.ErrNotExist.
func LoadKey(path string, forbidden ...string) (Key, error) {
	data, err := keyKind.Read(path, forbidden, maxKeyFile)
	if err != nil {
		return Key{}, err
	}
	defer clear(data)
	raw, err := ssh.ParseRawPrivateKey(data)
	if err != nil {
		var missing *ssh.PassphraseMissingError
		if errors.As(err, &missing) {
			return Key{}, fmt.Errorf("%w: %s is protected by a passphrase, which readproof cannot prompt for: create a dedicated key with `readproof key init`", ErrEncryptedKey, path)
		}
		return Key{}, fmt.Errorf("%w: %s is not an OpenSSH or PKCS#8 private key", ErrUnsupportedKey, path)
	}
	var priv ed25519.PrivateKey
	switch k := raw.(type) {
	case ed25519.PrivateKey:
		priv = k
	case *ed25519.PrivateKey:
		priv = *k
	default:
		return Key{}, fmt.Errorf("%w: %s holds a %T key; evidence signing keys are ed25519 (ssh-keygen -t ed25519)", ErrUnsupportedKey, path, raw)
	}
	key, err := NewKey(priv)
	if err != nil {
		return Key{}, fmt.Errorf("%s: %w", path, err)
	}
	key.Path = path
	if key.Principal, err = readPrincipal(path); err != nil {
		return Key{}, err
	}
	return key, nil
}

// ParsePublicKeys reads trusted ed25519 public keys: PKIX "PUBLIC KEY" PEM
// blocks if the data holds any, otherwise authorized_keys or allowed_signers
// lines ('#' comments and blank lines ignored; the two line forms may mix).
func ParsePublicKeys(data []byte) ([]ed25519.PublicKey, error) {
	var keys []ed25519.PublicKey
	rest := data
	sawPEM := false
	for {
		block, r := pem.Decode(rest)
		if block == nil {
			break
		}
		sawPEM = true
		rest = r
		if block.Type != "PUBLIC KEY" {
			return nil, fmt.Errorf("%w: PEM block %q, want PUBLIC KEY", ErrUnsupportedKey, block.Type)
		}
		pub, err := x509.ParsePKIXPublicKey(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: PEM public key: %v", ErrUnsupportedKey, err)
		}
		k, ok := pub.(ed25519.PublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: PEM holds a %T, want ed25519", ErrUnsupportedKey, pub)
		}
		keys = append(keys, k)
	}
	if sawPEM {
		return keys, nil
	}
	for n, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		var pub ssh.PublicKey
		if k, _, _, _, err := ssh.ParseAuthorizedKey([]byte(line)); err == nil {
			pub = k
		} else if s, err := parseAllowedSignersLine(line, n+1); err == nil {
			pub = s.Key
		} else {
			return nil, fmt.Errorf("%w: line %d is not a PEM, authorized_keys or allowed_signers public key", ErrUnsupportedKey, n+1)
		}
		ck, ok := pub.(ssh.CryptoPublicKey)
		if !ok {
			return nil, fmt.Errorf("%w: line %d: %s key, want ssh-ed25519", ErrUnsupportedKey, n+1, pub.Type())
		}
		k, ok := ck.CryptoPublicKey().(ed25519.PublicKey)
		if !ok || pub.Type() != ssh.KeyAlgoED25519 {
			return nil, fmt.Errorf("%w: line %d: %s key, want ssh-ed25519", ErrUnsupportedKey, n+1, pub.Type())
		}
		keys = append(keys, k)
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no public key found", ErrUnsupportedKey)
	}
	return keys, nil
}
