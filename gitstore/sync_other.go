//go:build !linux

package gitstore

import "os"

// Without syncfs(2), every file and directory is fsynced on its own.

func (s *repo) syncObjects(pending []string) error { return s.fsyncObjects(pending) }

// syncForUpdate makes the pending objects and the written lock files durable.
func (s *repo) syncForUpdate(files []*os.File) error {
	s.syncMu.Lock()
	defer s.syncMu.Unlock()
	pending := s.takePending()
	if s.whileSyncing != nil {
		s.whileSyncing()
	}
	if err := s.syncUpdateEach(pending, files); err != nil {
		s.restorePending(pending)
		return err
	}
	return nil
}

// syncDirs makes renames and removals in dirs durable.
func (s *repo) syncDirs(dirs map[string]bool) error { return s.fsyncDirs(dirs) }
