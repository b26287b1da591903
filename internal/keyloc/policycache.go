package keyloc

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"

	"github.com/readproof/readproof/internal/keyfile"
)

// PolicyCacheKeyName is the policy cache's key file in the user's config
// directory ($XDG_CONFIG_HOME/readproof/policy-cache.key).
const PolicyCacheKeyName = "policy-cache.key"

// ErrPolicyCacheKey is wrapped by every error of the policy cache's key.
var ErrPolicyCacheKey = errors.New("policy cache key unusable")

// policyCacheKind is the key-file policy for the policy cache's key
// (internal/keyfile): outside the store, the project and every git
// repository, mode 0600.
var policyCacheKind = keyfile.Kind{Name: "policy cache key", Any: ErrPolicyCacheKey}

// policyCacheKeySize is the key's size: 32 random bytes, written as 64 hex
// digits and a line break.
const policyCacheKeySize = 32

// PolicyCacheKey returns the secret the policy cache (policy.Cache.Key,
// docs/store-format.md "The policy cache") is authenticated under: the
// key file PolicyCacheKeyName in the user's config directory, created on
// first need (random, mode 0600, atomically; a file another process made
// meanwhile is read). forbidden are the directories it may not be in (the
// store, the project: Forbidden). Any error (no config directory, a key
// file open to others, a file that is not such a key) returns no key:
// the caller then neither reads nor writes the cache. The error never
// holds key bytes.
func PolicyCacheKey(forbidden ...string) ([]byte, error) {
	path, err := keyfile.DefaultPath(PolicyCacheKeyName)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPolicyCacheKey, err)
	}
	key, err := readPolicyCacheKey(path, forbidden)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	fresh := make([]byte, policyCacheKeySize)
	defer clear(fresh)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("%w: reading randomness: %w", ErrPolicyCacheKey, err)
	}
	text := make([]byte, 0, 2*policyCacheKeySize+1)
	defer clear(text)
	text = append(hex.AppendEncode(text, fresh), '\n')
	err = policyCacheKind.Write(path, forbidden, text, keyfile.WriteOptions{Mode: 0o600, MkdirAll: true})
	if err != nil && !errors.Is(err, keyfile.ErrExists) {
		return nil, err
	}
	// read back, ours or the one another process linked there first
	return readPolicyCacheKey(path, forbidden)
}

// readPolicyCacheKey reads and decodes the key file at path.
func readPolicyCacheKey(path string, forbidden []string) ([]byte, error) {
	data, err := policyCacheKind.Read(path, forbidden, 2*policyCacheKeySize+1)
	if err != nil {
		return nil, err
	}
	defer clear(data)
	key := make([]byte, policyCacheKeySize)
	if len(data) == 2*policyCacheKeySize+1 && data[len(data)-1] == '\n' {
		if _, err := hex.Decode(key, data[:2*policyCacheKeySize]); err == nil {
			return key, nil
		}
	}
	clear(key)
	// not the decode error, which would quote a key character
	return nil, fmt.Errorf("%w: %s is not 64 hex digits and a line break: remove it, and the next command makes a new one", ErrPolicyCacheKey, path)
}
