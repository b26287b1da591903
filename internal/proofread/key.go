package proofread

import (
	"errors"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/keyfile"
	"github.com/readproof/readproof/internal/keyloc"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/probe"
)

// KeyPath picks the probe key file: the path given (a flag), then [probe]
// key in the policy, then probe.DefaultKeyPath.
func KeyPath(given string, pol *policy.File) (string, error) {
	if given != "" {
		return filepath.Abs(given)
	}
	if pol != nil && pol.ProbeKey != "" {
		return pol.ProbeKey, nil
	}
	p, err := probe.DefaultKeyPath()
	if err != nil {
		return "", hint.With(err, "name the key file with --key or [probe] key in readproof.toml")
	}
	return p, nil
}

// LoadKeys loads the offline probe key for s (given names the file, "" for
// the configured one) and returns it with the path it came from.
func LoadKeys(given string, s *store.Store) (probe.Keys, string, error) {
	pol, err := s.Policy()
	if err != nil {
		return probe.Keys{}, "", err
	}
	return loadKeys(given, s.Path(), pol)
}

// loadKeys is LoadKeys for the store at storePath under pol. The path is ""
// when no key file could be named.
func loadKeys(given, storePath string, pol *policy.File) (probe.Keys, string, error) {
	path, err := KeyPath(given, pol)
	if err != nil {
		return probe.Keys{}, "", err
	}
	keys, err := probe.LoadKeys(path, keyloc.Forbidden(storePath, pol)...)
	if err != nil {
		return probe.Keys{}, path, KeyHint(err, path)
	}
	return keys, path, nil
}

// InitKey creates (or, with rotate, replaces) the probe key file at path.
func InitKey(path string, rotate bool, storePath string, pol *policy.File) error {
	forbidden := keyloc.Forbidden(storePath, pol)
	var err error
	if rotate {
		err = probe.RotateKeyFile(path, forbidden...)
	} else {
		err = probe.CreateKeyFile(path, forbidden...)
	}
	return KeyHint(err, path)
}

// KeyHint adds what a user can do about a probe key error.
func KeyHint(err error, path string) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, probe.ErrKeyLocation):
		return hint.With(err, "keep the key outside the store, the project and every git repository: pass --key PATH or set [probe] key in readproof.toml")
	case errors.Is(err, probe.ErrKeyExists):
		return hint.With(err, "keep it, or replace it with `readproof probe key init --rotate`, which ends every outstanding sentinel")
	case errors.Is(err, keyfile.ErrWrite):
		return err // it says what to do: the key was not written
	case errors.Is(err, os.ErrNotExist) || (errors.Is(err, probe.ErrKeyFile) && !fileExists(path)):
		return hint.With(err, "create the key first: "+initCommand(path))
	}
	return err
}

// initCommand is the command that makes the probe key at path: with --key
// unless path is the default location (without it, init would make the key
// there, and the command that named path would fail again).
func initCommand(path string) string {
	if d, err := probe.DefaultKeyPath(); err == nil && d == path {
		return "readproof probe key init"
	}
	return "readproof probe key init --key " + text.ShellArg(path)
}

func fileExists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
