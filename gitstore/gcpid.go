package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/progress"
)

// Automatic maintenance and git gc must never overlap. packLoose removes
// the loose copy of every object it has just packed; git gc's repack -A
// loosens the unreachable objects of the packs it replaces only when they
// have no loose copy (pack-objects' force_object_loose), then deletes those
// packs. A maintenance pack that a gc's repack counts among the packs it
// replaces therefore loses every young unreachable object (a writer's
// objects before its ref update) whose loose file went between gc's look at
// it and the pack's deletion: git skipped it because the loose file was
// there, and the pack that held it is gone. See docs/store-format.md,
// "Garbage collection".
//
// So maintenance holds gc.pid, git's own gc lock, taken as git gc takes it
// (gc.pid.lock created exclusively, a live holder on this host respected),
// which keeps any `git gc` (readproof's or a user's) from starting, and
// readproof gc holds the maintenance lock while git gc runs, which keeps
// maintenance from starting (and waits for one that runs).

// gcPidStale is how old a gc.pid may be and still count, as in git gc.
const gcPidStale = 12 * time.Hour

// holdGCPid takes git's gc lock for the caller, as git gc does: it fails
// (ok false) when gc.pid.lock exists (git gc or another holder is taking
// it) or when gc.pid names a process alive on this host (or any process
// on another host) and is younger than 12 hours. release removes gc.pid if
// it is still the caller's.
func holdGCPid(gitDir string, perm perms) (release func(), ok bool) {
	pidPath := filepath.Join(gitDir, "gc.pid")
	lockPath := pidPath + ".lock"
	f, err := perm.create(lockPath, perm.file())
	if err != nil {
		return nil, false
	}
	host, _ := os.Hostname()
	content := strconv.Itoa(os.Getpid()) + " " + host
	if gcPidHeld(pidPath, host) {
		f.Close()
		os.Remove(lockPath)
		return nil, false
	}
	_, err = f.WriteString(content)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(lockPath, pidPath)
	}
	if err != nil {
		os.Remove(lockPath)
		return nil, false
	}
	return func() {
		if b, err := os.ReadFile(pidPath); err == nil && string(b) == content {
			os.Remove(pidPath)
		}
	}, true
}

// gcPidHeld reports whether gc.pid at path names a gc git would respect:
// younger than gcPidStale, "<pid> <host>", on another host or a process
// alive here.
func gcPidHeld(path, host string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || time.Since(fi.ModTime()) > gcPidStale {
		return false
	}
	var b [512]byte
	n, _ := f.Read(b[:])
	pidStr, holder, ok := strings.Cut(strings.TrimSpace(string(b[:n])), " ")
	pid, err := strconv.Atoi(pidStr)
	if !ok || err != nil || pid <= 0 {
		return false
	}
	if holder != host {
		return true
	}
	return processAlive(pid)
}

// gcWaitMaintenance is the longest readproof gc waits for a running
// maintenance (which its own timeout bounds) before it gives up.
const gcWaitMaintenance = maintenanceTimeout + time.Minute

// waitMaintenance takes the maintenance lock for a gc, waiting while a
// maintenance holds it, so none runs alongside git gc; lockWait (nil: no
// one) hears of a wait that lasts notice (0: DefaultLockWaitNotice). It returns
// ErrGCRunning when the wait times out.
func waitMaintenance(ctx context.Context, gitDir string, lockWait func(LockWaitInfo), notice time.Duration) (unlock func(), err error) {
	deadline := time.Now().Add(gcWaitMaintenance)
	var wait progress.Waiter // started when the lock is first found held
	for delay, waiting := time.Millisecond, false; ; {
		if unlock, ok := lockMaintenance(gitDir); ok {
			return unlock, nil
		}
		now := time.Now()
		if now.After(deadline) {
			return nil, hint.With(fmt.Errorf("%w: automatic maintenance has held the store for %s (%s)", ErrGCRunning, gcWaitMaintenance, maintenanceLockPath(gitDir)),
				"try again once it is done; "+maintenanceFind)
		}
		if !waiting {
			wait, waiting = progress.NewWaiter(lockWait, notice), true
		}
		wait.Check(now, func() (LockWaitInfo, bool) {
			return LockWaitInfo{Path: maintenanceLockPath(gitDir), Lock: "the store's maintenance lock", Holder: "another readproof's automatic maintenance",
				Find: maintenanceFind, Left: deadline.Sub(now)}, true
		})
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		if delay < 50*time.Millisecond {
			delay *= 2
		}
	}
}
