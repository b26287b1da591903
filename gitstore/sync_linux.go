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
// about one fsync however many files a batch holds, but it also waits for
// other programs' dirty data on the same filesystem, so batches of at most
// smallSync files are fsynced one by one instead.
const smallSync = 8

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
func (s *repo) syncObjects(pending []string) error {
	if len(pending) <= smallSync {
		return s.fsyncObjects(pending)
	}
	return syncfs(filepath.Join(s.path, "objects"))
}

// syncTaken makes pending (taken by syncForUpdate) and the written lock
// files durable: each on its own when they are few, else one syncfs.
func (s *repo) syncTaken(pending []string, files []*os.File) error {
	if len(pending)+len(files) <= smallSync {
		return s.syncUpdateEach(pending, files)
	}
	return s.syncAll()
}

// syncDirs makes renames and removals in dirs durable.
func (s *repo) syncDirs(dirs map[string]bool) error {
	if len(dirs) <= smallSync {
		return s.fsyncDirs(dirs)
	}
	return syncfs(s.path)
}
