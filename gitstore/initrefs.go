package gitstore

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/readproof/readproof/internal/hint"
)

// ErrRefsExist is returned by WriteNewRefs when the repository already has a
// ref: the one-file write is only for a ref store that is new.
var ErrRefsExist = errors.New("the repository already has refs")

// WriteNewRefs writes refs into a repository that has none yet (a store
// just made by Init, before its first ref) as one packed-refs file: one
// lock, one write, one fsync and one rename, whatever the number of refs,
// like git clone. Either every ref appears or none does. The objects the
// refs name must already be in the repository and durable (a fetch that
// has returned); they are not looked up again here. It fails with
// ErrRefsExist when a loose ref or a packed-refs file is there.
func WriteNewRefs(g Store, refs []Ref) error {
	return writeNewRefs(g, refs, true)
}

// WriteNewRefs is gitstore.WriteNewRefs into the staged store, without
// the fsync of packed-refs and of the directory: nobody reads the staging
// directory, a killed clone's is removed whole, and Publish syncs every
// file and directory in it before the rename, so the refs become durable
// there, in one batch with everything else (two fsyncs fewer a clone,
// and none between the copy and the verification).
func (s *Staged) WriteNewRefs(refs []Ref) error {
	return writeNewRefs(s.Store, refs, false)
}

// writeNewRefs is WriteNewRefs; durable says whether packed-refs and the
// directory are synced before it returns.
func writeNewRefs(g Store, refs []Ref, durable bool) error {
	s, ok := g.(*repo)
	if !ok {
		return fmt.Errorf("write refs: %T is not a writable store", g)
	}
	sorted := make([]Ref, len(refs))
	copy(sorted, refs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].Name < sorted[j].Name })
	names := make(map[string]bool, len(sorted))
	for i, r := range sorted {
		if err := CheckRefName(r.Name); err != nil {
			return fmt.Errorf("write refs: %w", err)
		}
		if !isHexOID(string(r.OID)) {
			return fmt.Errorf("write refs: %s: bad object id %q", r.Name, truncate([]byte(r.OID)))
		}
		if i > 0 && sorted[i-1].Name == r.Name {
			return fmt.Errorf("write refs: %s given twice", r.Name)
		}
		names[r.Name] = true
	}
	for _, r := range sorted {
		for i := len("refs/"); i < len(r.Name); i++ {
			if r.Name[i] == '/' && names[r.Name[:i]] {
				return fmt.Errorf("write refs: %s and %s: %w", r.Name[:i], r.Name, dirFileConflict(r.Name))
			}
		}
	}
	// Objects written through this Store are buffered: write them and make
	// them durable before any ref can name them (objects before refs).
	if err := s.Sync(); err != nil {
		return unpublished(fmt.Errorf("write refs: %w", err))
	}
	packedPath := filepath.Join(s.path, "packed-refs")
	lock, err := s.lockFile(packedPath, "packed-refs", time.Now().Add(s.opts.LockTimeout))
	if err != nil {
		return unpublished(err)
	}
	defer lock.release()
	// With the packed-refs lock held, no git pack-refs can run; a loose ref
	// written meanwhile by another writer is caught here.
	if _, err := os.Stat(packedPath); err == nil {
		return fmt.Errorf("write refs into %s: %w (packed-refs)", s.path, ErrRefsExist)
	}
	if name, err := anyLooseRef(filepath.Join(s.path, "refs")); err != nil {
		return fmt.Errorf("write refs into %s: %w", s.path, err)
	} else if name != "" {
		return fmt.Errorf("write refs into %s: %w (%s)", s.path, ErrRefsExist, name)
	}
	w := bufio.NewWriterSize(lock.f, 1<<16)
	// "sorted" lets git and readers binary-search; no "peeled" trait, so
	// git peels annotated tags itself (readproof's refs name commits).
	w.WriteString("# pack-refs with: sorted \n")
	for _, r := range sorted {
		w.WriteString(string(r.OID))
		w.WriteByte(' ')
		w.WriteString(r.Name)
		w.WriteByte('\n')
	}
	// Until the rename no ref is there (unpublished gives the hint).
	if err := w.Flush(); err != nil {
		return unpublished(fmt.Errorf("write refs: %w", err))
	}
	if durable {
		if err := (syncTarget{f: lock.f}).sync(); err != nil {
			return unpublished(fmt.Errorf("write refs: sync: %w", err))
		}
	}
	if err := lock.f.Close(); err != nil {
		return unpublished(fmt.Errorf("write refs: %w", err))
	}
	lock.f = nil
	if err := os.Rename(lock.path, packedPath); err != nil {
		return unpublished(fmt.Errorf("write refs: replace packed-refs: %w", err))
	}
	lock.done = true
	if !durable {
		return nil
	}
	if err := (syncTarget{path: s.path, dir: true}).sync(); err != nil {
		return hint.With(fmt.Errorf("write refs: sync: %w", err),
			"every ref was written, but the file system could not make it durable: repair it, then run `readproof verify`")
	}
	return nil
}

// anyLooseRef returns the name of some file under dir, or "".
func anyLooseRef(dir string) (string, error) {
	found := ""
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() {
			found = p
			return fs.SkipAll
		}
		return nil
	})
	return found, err
}
