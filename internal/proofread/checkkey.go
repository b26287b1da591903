package proofread

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/readproof/readproof/internal/policy"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
)

// CheckKeys loads the probe key for commands that check verdict record
// MACs but work without it (verify, evidence verify, manifest, pull). keys
// is nil when no key is usable; path is the key file looked for ("" when
// none could be named). warn is nil when there is no key file at path:
// nothing to check with, as on a machine that never ran a probe. When a key
// file is there but cannot be used (too open, unreadable, malformed, in a
// refused place), warn says so, naming the path and the reason, so the
// caller can tell the user that MACs were not checked (NotCheckedWarning).
//
// A policy file that cannot be read (the store opened with OpenLazy) is
// warn too: the key it would name is unknown.
func CheckKeys(s *store.Store) (keys *probe.Keys, path string, warn error) {
	pol, err := s.Policy()
	if err != nil {
		return nil, "", err
	}
	return CheckKeysFor(s.Path(), pol)
}

// CheckKeysFor is CheckKeys for the store at storePath under pol, which
// need not be open yet (clone checks the records it fetches before the
// store is usable).
func CheckKeysFor(storePath string, pol *policy.File) (keys *probe.Keys, path string, warn error) {
	k, path, err := loadKeys("", storePath, pol)
	switch {
	case err == nil:
		return &k, path, nil
	case path == "": // no key file could be named
		return nil, "", nil
	}
	if _, serr := os.Lstat(path); errors.Is(serr, fs.ErrNotExist) {
		return nil, path, nil
	}
	if !strings.Contains(err.Error(), path) {
		err = fmt.Errorf("probe key %s: %w", path, err)
	}
	return nil, path, err
}

// NotCheckedWarning is the warning line for a probe key CheckKeys could not
// use (warn non-nil).
func NotCheckedWarning(warn error) string {
	return "verdict record MACs not checked: " + warn.Error()
}
