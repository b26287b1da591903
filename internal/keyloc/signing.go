package keyloc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
)

// SigningKeyEnv names the signing key file; it takes precedence over
// [signing] key in readproof.toml.
const SigningKeyEnv = "READPROOF_SIGNING_KEY"

// ConfiguredSigning is the key that signs manifest commits:
// READPROOF_SIGNING_KEY, else [signing] key; "" when neither is set.
func ConfiguredSigning(pol *policy.File) (string, error) {
	if v := os.Getenv(SigningKeyEnv); v != "" {
		if rest, ok := strings.CutPrefix(v, "~/"); ok {
			home, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("%w: %s=%q: no home directory to expand ~ in: give an absolute path", ErrConfig, SigningKeyEnv, v)
			}
			v = filepath.Join(home, rest)
		}
		return filepath.Abs(v)
	}
	if pol != nil {
		return pol.SigningKey, nil
	}
	return "", nil
}

// SigningPath picks the signing key file: given (a --key flag), then the
// configured key, then evidence.DefaultKeyPath.
func SigningPath(given string, pol *policy.File) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	if p, err := ConfiguredSigning(pol); err != nil || p != "" {
		return p, err
	}
	p, err := evidence.DefaultKeyPath()
	if err != nil {
		return "", hint.With(err, "name the key with --key, "+SigningKeyEnv+" or [signing] key in readproof.toml")
	}
	return p, nil
}

// LoadSigning loads the key SigningPath picks, for the store at storePath.
func LoadSigning(given, storePath string, pol *policy.File) (evidence.Key, error) {
	path, err := SigningPath(given, pol)
	if err != nil {
		return evidence.Key{}, err
	}
	key, err := evidence.LoadKey(path, Forbidden(storePath, pol)...)
	if err != nil {
		return evidence.Key{}, SigningHint(err, path)
	}
	return key, nil
}

// CreateSigning creates a signing key at path, remembering principal, for
// the store at storePath.
func CreateSigning(path, principal, storePath string, pol *policy.File) (evidence.Key, error) {
	key, err := evidence.CreateKeyFor(path, principal, Forbidden(storePath, pol)...)
	return key, SigningHint(err, path)
}

// SigningHint adds what a user can do about a signing key error.
func SigningHint(err error, path string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, evidence.ErrKeyLocation):
		return hint.With(err, "keep the signing key outside the store, the project and every git repository: pass --key PATH, or point "+SigningKeyEnv+" / [signing] key elsewhere")
	case errors.Is(err, evidence.ErrKeyExists):
		return hint.With(err, "print the existing key with `readproof key show --key "+path+"`, or choose another path with --key")
	case errors.Is(err, fs.ErrNotExist):
		return hint.With(err, "create a key with `readproof key init --key "+path+"`, or name an existing OpenSSH ed25519 key")
	}
	return err
}

// CommitSigner returns the function that signs every manifest commit with
// the configured signing key, or nil when none is configured. The key is
// loaded on the first commit, so commands that only read work even when it
// is missing.
func CommitSigner(storePath string, pol *policy.File) (func(payload []byte) (string, error), error) {
	path, err := ConfiguredSigning(pol)
	if err != nil || path == "" {
		return nil, err
	}
	forbidden := Forbidden(storePath, pol)
	var (
		once sync.Once
		key  evidence.Key
		kerr error
	)
	return func(payload []byte) (string, error) {
		once.Do(func() {
			key, kerr = evidence.LoadKey(path, forbidden...)
			kerr = SigningHint(kerr, path)
		})
		if kerr != nil {
			return "", kerr
		}
		return evidence.SignCommit(payload, key)
	}, nil
}
