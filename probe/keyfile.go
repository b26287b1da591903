package probe

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/readproof/readproof/internal/keyfile"
)

// Key file errors; match them with errors.Is. Messages never contain key bytes.
var (
	// ErrKeyFile: the key file is missing, unreadable, too open or malformed.
	ErrKeyFile = errors.New("probe key file unusable")
	// ErrKeyLocation: the key path lies inside a forbidden directory or a git repository.
	ErrKeyLocation = errors.New("probe key file location refused")
	// ErrKeyExists: CreateKeyFile found a file already there.
	ErrKeyExists = errors.New("probe key file already exists")
)

// maxKeyFileBytes bounds what LoadKeyFile reads: 64 hex digits and a CRLF.
const maxKeyFileBytes = 66

// DefaultKeyPath returns the suggested key file location,
// $XDG_CONFIG_HOME/readproof/probe.key (os.UserConfigDir).
func DefaultKeyPath() (string, error) {
	p, err := keyfile.DefaultPath("probe.key")
	if err != nil {
		return "", fmt.Errorf("%w: %w; pass a key path explicitly", ErrKeyFile, err)
	}
	return p, nil
}

// keyKind is the key-file policy for probe keys (internal/keyfile). Every
// key-file error wraps ErrKeyFile; location refusals also ErrKeyLocation.
var keyKind = keyfile.Kind{
	Name:     "probe key",
	Location: ErrKeyLocation,
	Exists:   ErrKeyExists,
	Any:      ErrKeyFile,
}

// LoadKeyFile reads the master secret from the key file at path
// (PROBE_PROTOCOL.md §10.1): 64 hex digits, optionally followed by one line
// break, in a regular file that grants no permissions to group or others,
// outside every directory in forbidden and outside every git repository.
func LoadKeyFile(path string, forbidden ...string) ([]byte, error) {
	data, err := keyKind.Read(path, forbidden, maxKeyFileBytes)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w; create a key file first (readproof probe key init)", err)
		}
		return nil, err
	}
	defer clear(data)
	return parseKey(path, data)
}

func parseKey(path string, data []byte) ([]byte, error) {
	text := data
	switch {
	case bytes.HasSuffix(text, []byte("\r\n")):
		text = text[:len(text)-2]
	case bytes.HasSuffix(text, []byte("\n")):
		text = text[:len(text)-1]
	}
	bad := fmt.Errorf("%w: %s must hold exactly 64 hex digits and an optional line break; replace it with a new key file (readproof probe key init --rotate)", ErrKeyFile, path)
	if len(text) != 2*MasterSize {
		return nil, bad
	}
	key := make([]byte, MasterSize)
	if _, err := hex.Decode(key, text); err != nil {
		clear(key)
		return nil, bad // the decode error would quote a key character
	}
	zero := true
	for _, b := range key {
		zero = zero && b == 0
	}
	if zero {
		return nil, fmt.Errorf("%w: %s holds an all-zero key; replace it with a new key file (readproof probe key init --rotate)", ErrKeyFile, path)
	}
	return key, nil
}

// LoadKeys loads the key file and derives the Keys from it.
func LoadKeys(path string, forbidden ...string) (Keys, error) {
	master, err := LoadKeyFile(path, forbidden...)
	if err != nil {
		return Keys{}, err
	}
	defer clear(master)
	return DeriveKeys(master)
}

// CreateKeyFile writes a new random key file at path with mode 0600,
// creating missing parent directories with mode 0700. It refuses a path
// inside forbidden or inside a git repository, and an existing file
// (ErrKeyExists): rotation is RotateKeyFile.
func CreateKeyFile(path string, forbidden ...string) error {
	return writeKeyFile(path, forbidden, false)
}

// RotateKeyFile replaces (or creates) the key file at path with a new random
// key, atomically. Every sentinel minted under the old key adjudicates as
// HALLUCINATED afterwards.
func RotateKeyFile(path string, forbidden ...string) error {
	return writeKeyFile(path, forbidden, true)
}

func writeKeyFile(path string, forbidden []string, replace bool) error {
	master := make([]byte, MasterSize)
	defer clear(master)
	if _, err := io.ReadFull(rand.Reader, master); err != nil {
		return fmt.Errorf("%w: reading randomness: %w", ErrKeyFile, err)
	}
	text := make([]byte, 2*MasterSize+1)
	defer clear(text)
	hex.Encode(text, master)
	text[len(text)-1] = '\n'
	// an existing key is ErrKeyExists; what to do about it (keep it, or
	// --rotate) is the caller's hint, not part of the message
	return keyKind.Write(path, forbidden, text, keyfile.WriteOptions{Mode: 0o600, Replace: replace, MkdirAll: true})
}
