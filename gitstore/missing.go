package gitstore

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/text"
)

// UnindexedPacks lists the packs in objects/pack of the repository at
// gitDir that have no index beside them (pack-X.pack without pack-X.idx),
// as paths. Neither git nor readproof reads the objects of such a pack: its
// index was deleted, or a writer is between the rename of the pack and of
// its index (a writer killed there leaves only objects no ref names).
// A listing that fails lists nothing.
func UnindexedPacks(gitDir string) []string {
	dir := filepath.Join(gitDir, "objects", "pack")
	entries, err := readDir(dir)
	if err != nil {
		return nil
	}
	idx := map[string]bool{}
	for _, e := range entries {
		if base, ok := strings.CutSuffix(e.Name(), ".idx"); ok {
			idx[base] = true
		}
	}
	var out []string
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), ".pack")
		if ok && strings.HasPrefix(base, "pack-") && !idx[base] {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	slices.Sort(out)
	return out
}

// UnindexedPackAdvice says what to do about pack, a pack without its index.
func UnindexedPackAdvice(pack string) string {
	return fmt.Sprintf("%s has no index: its objects cannot be read; once nothing writes to the store, `git index-pack %s` rebuilds the index", pack, text.ShellArg(pack))
}

// missingObject is the error for an object that is neither loose nor in an
// indexed pack. Only a miss pays for the listing of objects/pack, which
// afterMiss has already made.
func (s *repo) missingObject(id OID) error {
	err := fmt.Errorf("object %s: %w", id, ErrNotFound)
	if packs := UnindexedPacks(s.path); len(packs) > 0 {
		return hint.With(err, UnindexedPackAdvice(packs[0]))
	}
	return hint.With(err, "`readproof verify` names what the missing object breaks; restore it from a clone (readproof pull) or a backup")
}
