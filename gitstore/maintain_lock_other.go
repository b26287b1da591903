//go:build !unix

package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// lockMaintenance creates the lock file maintenanceLock in the git
// directory; one older than maintenanceStaleAge was left by a killed
// process and is taken over.
func lockMaintenance(gitDir string) (unlock func(), ok bool) {
	lock := filepath.Join(gitDir, maintenanceLock)
	f, err := os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		fi, serr := os.Stat(lock)
		if serr != nil || time.Since(fi.ModTime()) < maintenanceStaleAge {
			return nil, false
		}
		stale := lock + ".stale." + strconv.Itoa(os.Getpid())
		if os.Rename(lock, stale) != nil {
			return nil, false
		}
		os.Remove(stale)
		f, err = os.OpenFile(lock, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	}
	if err != nil {
		return nil, false
	}
	f.Close()
	return func() { os.Remove(lock) }, true
}

// maintenanceLockPath is what lockMaintenance locks.
func maintenanceLockPath(gitDir string) string { return filepath.Join(gitDir, maintenanceLock) }

// flockFind says how to find the holder of a git mirror's lock file.
const flockFind = "a readproof process holds it; a lock file older than ten minutes is taken over"

// maintenanceFind says how to find the maintenance lock's holder.
const maintenanceFind = "a readproof process is running it; if none is, remove the file"

// processAlive cannot tell here: a gc.pid counts until it is 12 hours old.
func processAlive(pid int) bool { return true }
