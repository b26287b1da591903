package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
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

// DamagedIndex is a pack index that cannot be read though its pack is
// there (cut short, overwritten): neither git nor readproof reads the
// objects of its pack, which all read as missing.
type DamagedIndex struct {
	Path string // the .idx
	Pack string // its .pack
	Err  error  // why it cannot be read
}

func damagedIndex(dir, name string, err error) DamagedIndex {
	return DamagedIndex{Path: filepath.Join(dir, name+".idx"), Pack: filepath.Join(dir, name+".pack"), Err: err}
}

// Advice says what is wrong with the index and what to do about it.
func (d DamagedIndex) Advice() string {
	why := strings.TrimPrefix(d.Err.Error(), filepath.Base(d.Path)+": ")
	return fmt.Sprintf("%s cannot be read (%s): the objects of its pack cannot be read; once nothing writes to the store, `git index-pack %s` writes the index again", d.Path, why, text.ShellArg(d.Pack))
}

// DamagedPackIndexes lists the pack indexes in objects/pack of the
// repository at gitDir that cannot be read though their pack is there.
// A listing that fails lists nothing.
func DamagedPackIndexes(gitDir string) []DamagedIndex {
	dir := filepath.Join(gitDir, "objects", "pack")
	entries, err := readDir(dir)
	if err != nil {
		return nil
	}
	var out []DamagedIndex
	for i, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") || !packListed(entries[i+1:], name) {
			continue
		}
		p, err := openPackIndex(dir, name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				out = append(out, damagedIndex(dir, name, err))
			}
			continue
		}
		p.close()
	}
	return out
}

// missingObject is the error for an object that is neither loose nor in an
// indexed pack. Only a miss pays for the listing of objects/pack, which
// afterMiss has already made.
func (s *repo) missingObject(id OID) error {
	err := fmt.Errorf("object %s: %w", id, ErrNotFound)
	if packs := UnindexedPacks(s.path); len(packs) > 0 {
		return hint.With(err, UnindexedPackAdvice(packs[0]))
	}
	if len(s.st.badIdx) > 0 {
		return hint.With(err, s.st.badIdx[0].Advice())
	}
	return hint.With(err, "`readproof verify` names what the missing object breaks; restore it from a clone (readproof pull) or a backup")
}
