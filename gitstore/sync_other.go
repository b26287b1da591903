//go:build !linux

package gitstore

import (
	"os"
	"path"
	"path/filepath"
)

// Without syncfs(2), every file and directory is fsynced on its own.

// syncObjects fsyncs each pending loose object, its fan-out directory and
// the objects directory.
func (s *repo) syncObjects(pending []string) error {
	dirs := map[string]bool{"objects": true}
	for _, rel := range pending {
		if err := fsyncPath(filepath.Join(s.path, filepath.FromSlash(rel))); err != nil {
			return err
		}
		dirs[path.Dir(rel)] = true
	}
	for d := range dirs {
		if err := syncDir(filepath.Join(s.path, filepath.FromSlash(d))); err != nil {
			return err
		}
	}
	return nil
}

// syncForUpdate makes the pending objects and the written lock files durable.
func (s *repo) syncForUpdate(files []*os.File) error {
	if err := s.Sync(); err != nil {
		return err
	}
	for _, f := range files {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return nil
}

// syncDirs makes renames and removals in dirs durable.
func (s *repo) syncDirs(dirs map[string]bool) error {
	for d := range dirs {
		if err := syncDir(d); err != nil {
			return err
		}
	}
	return nil
}
