//go:build !linux

package gitstore

import "os"

// Without syncfs(2), every file and directory is fsynced on its own.

func (s *repo) syncObjects(pending []string) error { return s.fsyncObjects(pending) }

// syncTaken makes pending (taken by syncForUpdate) and the written lock
// files durable.
func (s *repo) syncTaken(pending []string, files []*os.File) error {
	return s.syncUpdateEach(pending, files)
}

// syncDirs makes renames and removals in dirs durable.
func (s *repo) syncDirs(dirs map[string]bool) error { return s.fsyncDirs(dirs) }
