package gitstore

import (
	"errors"
	"io/fs"
	"path"
	"path/filepath"
)

// fsyncObjects fsyncs each pending object file (loose objects, packs and
// their indexes), its directory and the objects directory.
func (s *repo) fsyncObjects(pending []string) error {
	dirs := map[string]bool{"objects": true}
	for _, rel := range pending {
		if err := fsyncPath(filepath.Join(s.path, filepath.FromSlash(rel))); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				continue // a concurrent git gc packed it (and fsynced the pack)
			}
			return err
		}
		dirs[path.Dir(rel)] = true
	}
	for d := range dirs {
		if err := syncDir(filepath.Join(s.path, filepath.FromSlash(d))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// fsyncDirs makes renames and removals in dirs durable.
func (s *repo) fsyncDirs(dirs map[string]bool) error {
	for d := range dirs {
		// git pack-refs may have moved the refs and removed the directory
		if err := syncDir(d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
