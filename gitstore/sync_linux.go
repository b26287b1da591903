//go:build linux

package gitstore

import (
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// On Linux one syncfs(2) makes everything written to the filesystem durable:
// every pending loose object, lock file and directory entry at once. It costs
// about one fsync, however many files an Update touches.

// syncfs flushes the filesystem holding dir.
func syncfs(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Syncfs(fd); err != nil {
		return fmt.Errorf("syncfs %s: %w", dir, os.NewSyscallError("syncfs", err))
	}
	return nil
}

// syncAll flushes the filesystems holding the refs and the objects.
func (s *repo) syncAll() error {
	if err := syncfs(s.path); err != nil {
		return err
	}
	objects := filepath.Join(s.path, "objects")
	var a, b unix.Stat_t
	if unix.Stat(s.path, &a) == nil && unix.Stat(objects, &b) == nil && a.Dev == b.Dev {
		return nil
	}
	return syncfs(objects)
}

// syncObjects makes the pending loose objects durable.
func (s *repo) syncObjects(_ []string) error {
	return syncfs(filepath.Join(s.path, "objects"))
}

// syncForUpdate makes the pending objects and the written lock files durable.
func (s *repo) syncForUpdate(_ []*os.File) error {
	s.mu.Lock()
	pending := s.pending
	s.pending = nil
	s.mu.Unlock()
	if err := s.syncAll(); err != nil {
		s.mu.Lock()
		s.pending = append(s.pending, pending...)
		s.mu.Unlock()
		return err
	}
	return nil
}

// syncDirs makes renames and removals in dirs durable.
func (s *repo) syncDirs(_ map[string]bool) error {
	return syncfs(s.path)
}
