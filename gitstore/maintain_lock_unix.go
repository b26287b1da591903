//go:build unix

package gitstore

import (
	"os"
	"path/filepath"
	"syscall"
)

// lockMaintenance takes an exclusive flock on objects/pack without waiting.
// The kernel drops it when the process dies, so a killed maintenance leaves
// nothing behind; no file is created.
//
// unlock releases the lock with LOCK_UN before it closes the file. Closing
// alone is not enough: an flock belongs to the open file description, and
// a process this one forks meanwhile (another goroutine starting git) holds
// a copy of every descriptor until it execs, when O_CLOEXEC closes it. On a
// busy machine that can take long enough for every write's maintenance to
// find the lock still held by its own last maintenance and skip its turn.
// LOCK_UN releases the lock for every copy at once.
func lockMaintenance(gitDir string) (unlock func(), ok bool) {
	f, err := os.Open(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		return nil, false
	}
	fd := int(f.Fd())
	if syscall.Flock(fd, syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() {
		_ = syscall.Flock(fd, syscall.LOCK_UN)
		f.Close()
	}, true
}

// maintenanceLockPath is what lockMaintenance locks.
func maintenanceLockPath(gitDir string) string { return filepath.Join(gitDir, "objects", "pack") }

// flockFind says how to find the holder of an flock (the maintenance
// lock's, a git mirror's).
const flockFind = "`lslocks` (Linux) or `lsof` names the process that holds it"

// maintenanceFind says how to find the maintenance lock's holder.
const maintenanceFind = flockFind

// processAlive reports whether a process with this id exists (kill -0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
