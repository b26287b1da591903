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
func lockMaintenance(gitDir string) (unlock func(), ok bool) {
	f, err := os.Open(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		return nil, false
	}
	if syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true
}

// processAlive reports whether a process with this id exists (kill -0).
func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || err == syscall.EPERM
}
