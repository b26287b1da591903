package probe

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
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
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("%w: no user config directory (%w); pass a key path explicitly", ErrKeyFile, err)
	}
	return filepath.Join(dir, "readproof", "probe.key"), nil
}

// LoadKeyFile reads the master secret from the key file at path
// (PROBE_PROTOCOL.md §10.1): 64 hex digits, optionally followed by one line
// break, in a regular file that grants no permissions to group or others,
// outside every directory in forbidden and outside every git repository.
func LoadKeyFile(path string, forbidden ...string) ([]byte, error) {
	real, err := resolvePath(path)
	if err != nil {
		return nil, err
	}
	if err := checkLocation(path, real, forbidden); err != nil {
		return nil, err
	}
	// Lstat first so that a FIFO or device is refused before open can block;
	// then check the opened file is the one inspected.
	fi, err := os.Lstat(real)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("%w: %s does not exist; create a key file first (CreateKeyFile)", ErrKeyFile, path)
		}
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%w: %s is not a regular file; point at the key file itself", ErrKeyFile, path)
	}
	f, err := os.Open(real)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	defer f.Close()
	ofi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeyFile, err)
	}
	if !os.SameFile(fi, ofi) {
		return nil, fmt.Errorf("%w: %s changed while it was being opened; try again", ErrKeyFile, path)
	}
	if perm := ofi.Mode().Perm(); perm&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o, open to group or others; run chmod 600 %s", ErrKeyFile, path, perm, path)
	}
	data, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read %s: %w", ErrKeyFile, path, err)
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
	bad := fmt.Errorf("%w: %s must hold exactly 64 hex digits and an optional line break; replace it with a new key file (RotateKeyFile)", ErrKeyFile, path)
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
		return nil, fmt.Errorf("%w: %s holds an all-zero key; replace it with a new key file (RotateKeyFile)", ErrKeyFile, path)
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
	real, err := prepareKeyPath(path, forbidden)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(real, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s; keep it, or replace it with RotateKeyFile, which ends every outstanding sentinel", ErrKeyExists, path)
		}
		return fmt.Errorf("%w: create %s: %w", ErrKeyFile, path, err)
	}
	if err := writeKey(f); err != nil {
		_ = os.Remove(real)
		return fmt.Errorf("%w: write %s: %w", ErrKeyFile, path, err)
	}
	return nil
}

// RotateKeyFile replaces (or creates) the key file at path with a new random
// key, atomically. Every sentinel minted under the old key adjudicates as
// HALLUCINATED afterwards.
func RotateKeyFile(path string, forbidden ...string) error {
	real, err := prepareKeyPath(path, forbidden)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(real), ".probe-key-*")
	if err != nil {
		return fmt.Errorf("%w: create a temporary file beside %s: %w", ErrKeyFile, path, err)
	}
	tmp := f.Name()
	if err := writeKey(f); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: write %s: %w", ErrKeyFile, tmp, err)
	}
	if err := os.Rename(tmp, real); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("%w: replace %s: %w", ErrKeyFile, path, err)
	}
	return nil
}

// prepareKeyPath checks the location of a key file about to be written and
// creates its parent directories.
func prepareKeyPath(path string, forbidden []string) (string, error) {
	real, err := resolvePath(path)
	if err != nil {
		return "", err
	}
	if err := checkLocation(path, real, forbidden); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(real), 0o700); err != nil {
		return "", fmt.Errorf("%w: create the directory of %s: %w", ErrKeyFile, path, err)
	}
	return real, nil
}

func writeKey(f *os.File) error {
	master := make([]byte, MasterSize)
	defer clear(master)
	if _, err := io.ReadFull(rand.Reader, master); err != nil {
		f.Close()
		return err
	}
	text := make([]byte, 2*MasterSize+1)
	defer clear(text)
	hex.Encode(text, master)
	text[len(text)-1] = '\n'
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(text); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// resolvePath returns the absolute path with every symbolic link of its
// existing part resolved; the missing tail is appended as written.
func resolvePath(path string) (string, error) {
	if path == "" {
		return "", fmt.Errorf("%w: empty key path; name a file outside every repository", ErrKeyFile)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrKeyFile, path, err)
	}
	head, tail := abs, ""
	for {
		r, err := filepath.EvalSymlinks(head)
		if err == nil {
			return filepath.Join(r, tail), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("%w: resolve %s: %w", ErrKeyFile, path, err)
		}
		parent := filepath.Dir(head)
		if parent == head {
			return abs, nil
		}
		tail = filepath.Join(filepath.Base(head), tail)
		head = parent
	}
}

// checkLocation refuses a key path inside any forbidden directory (compared
// both as written and with links resolved) or inside a git repository.
func checkLocation(path, real string, forbidden []string) error {
	abs, _ := filepath.Abs(path)
	for _, dir := range forbidden {
		if dir == "" {
			continue
		}
		d, err := resolvePath(dir)
		if err != nil {
			return err
		}
		da, _ := filepath.Abs(dir)
		if within(d, real) || within(da, abs) || within(d, abs) || within(da, real) {
			return fmt.Errorf("%w: %s lies inside %s; keep the key outside the store and every repository", ErrKeyLocation, path, dir)
		}
	}
	for d := filepath.Dir(real); ; d = filepath.Dir(d) {
		if isRepo(d) {
			return fmt.Errorf("%w: %s lies inside the git repository %s; keep the key outside every repository", ErrKeyLocation, path, d)
		}
		if filepath.Dir(d) == d {
			return nil
		}
	}
}

// within reports whether p is dir or lies below it.
func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)))
}

// isRepo reports whether dir is a git work tree root (has .git) or a bare
// repository (HEAD file, objects and refs directories).
func isRepo(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	head, err := os.Stat(filepath.Join(dir, "HEAD"))
	if err != nil || !head.Mode().IsRegular() {
		return false
	}
	for _, sub := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(dir, sub))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}
