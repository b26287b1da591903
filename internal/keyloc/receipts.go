package keyloc

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/receipts"
)

// ReceiptsKeyEnv names the receipts key file; it takes precedence over
// [receipts] key in readproof.toml.
const ReceiptsKeyEnv = "READPROOF_RECEIPTS_KEY"

// ReceiptsInitHint is the hint for a receipts key that does not exist.
const ReceiptsInitHint = "create the key with `readproof receipts key init` (or name an existing key file with --key, " + ReceiptsKeyEnv + " or [receipts] key in readproof.toml)"

// receiptsInitHint is ReceiptsInitHint for a key at path, named by from:
// one --key named is made there by `receipts key init --key PATH` (without
// it, init would make the key at the default location, and the call that
// named the path would fail again). READPROOF_RECEIPTS_KEY and [receipts]
// key name it to init too.
func receiptsInitHint(path, from string) string {
	if from != "--key" {
		return ReceiptsInitHint
	}
	return "create the key with `readproof receipts key init --key " + text.ShellArg(path) + "` (or name an existing key file with --key, " + ReceiptsKeyEnv + " or [receipts] key in readproof.toml)"
}

// DefaultReceiptsPath is $XDG_CONFIG_HOME/readproof/receipts.key (per
// os.UserConfigDir).
func DefaultReceiptsPath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", hint.With(fmt.Errorf("locating the receipt key: no user config directory: %w", err),
			"name the key file with --key PATH, "+ReceiptsKeyEnv+" or [receipts] key in readproof.toml")
	}
	return filepath.Join(dir, "readproof", "receipts.key"), nil
}

// ReceiptsConfigured reports whether a receipts key is configured
// (READPROOF_RECEIPTS_KEY or [receipts] key), without the default.
func ReceiptsConfigured(pol *policy.File) bool {
	return os.Getenv(ReceiptsKeyEnv) != "" || (pol != nil && pol.ReceiptsKey != "")
}

// ReceiptsPath picks the receipts key file: given (a --key flag), then
// READPROOF_RECEIPTS_KEY, then [receipts] key, then the default. It returns
// the absolute path and where it came from.
func ReceiptsPath(given string, pol *policy.File) (path, from string, err error) {
	var p string
	switch {
	case given != "":
		p, from = given, "--key"
	case os.Getenv(ReceiptsKeyEnv) != "":
		p, from = os.Getenv(ReceiptsKeyEnv), ReceiptsKeyEnv
	case pol != nil && pol.ReceiptsKey != "":
		p, from = pol.ReceiptsKey, "[receipts] key in "+pol.Path
	default:
		d, err := DefaultReceiptsPath()
		if err != nil {
			return "", "", err
		}
		p, from = d, "the default location"
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", "", fmt.Errorf("receipt key %q (from %s): %w", p, from, err)
	}
	return abs, from, nil
}

// LoadReceipts finds and loads the receipts key for the store at
// storePath, with hints a user can act on. It returns the key's path even
// when loading failed.
func LoadReceipts(given, storePath string, pol *policy.File) (receipts.Key, string, error) {
	path, from, err := ReceiptsPath(given, pol)
	if err != nil {
		return receipts.Key{}, "", err
	}
	k, err := receipts.LoadKey(path, Forbidden(storePath, pol)...)
	if err == nil {
		return k, path, nil
	}
	switch {
	case errors.Is(err, fs.ErrNotExist):
		// the cause says the same again ("receipt key K does not exist
		// (create one with ...)"), and the hint says how: it is kept for
		// errors.Is, not printed
		return receipts.Key{}, path, hint.With(&missingKey{msg: fmt.Sprintf("no receipt key at %s (from %s)", path, from), err: err}, receiptsInitHint(path, from))
	case errors.Is(err, receipts.ErrKeyPath):
		return receipts.Key{}, path, hint.With(err, "move the key outside the store, the project and every git repository, and name it with --key PATH, "+ReceiptsKeyEnv+" or [receipts] key")
	case errors.Is(err, receipts.ErrKeyInsecure):
		return receipts.Key{}, path, hint.With(err, "run chmod 600 "+path)
	}
	return receipts.Key{}, path, fmt.Errorf("%w (key from %s)", err, from)
}

// missingKey is the error of a receipt key that is not there: its message,
// and the loader's error beneath it for errors.Is.
type missingKey struct {
	msg string
	err error
}

func (e *missingKey) Error() string { return e.msg }
func (e *missingKey) Unwrap() error { return e.err }

// ReceiptsForCheck loads the key evidence export and verify check receipt
// MACs with, through the lookup the receipts commands use: the one
// configured (READPROOF_RECEIPTS_KEY, else [receipts] key), else the one at
// the default location when a file is there, the key `readproof exec` and
// `receipts issue` made the receipts under (found is then true); nil when
// there is none. The command and the MCP server's readproof_evidence_export
// both call it (before session 29's re-read the server checked only with
// the key it issues under, and exported a receipt edited in the store that
// `evidence export` refuses).
func ReceiptsForCheck(storePath string, pol *policy.File) (key *receipts.Key, found bool, err error) {
	if !ReceiptsConfigured(pol) {
		path, err := DefaultReceiptsPath()
		if err != nil {
			return nil, false, nil
		}
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return nil, false, nil
		}
		found = true
	}
	k, _, err := LoadReceipts("", storePath, pol)
	if err != nil {
		return nil, found, err
	}
	return &k, found, nil
}
