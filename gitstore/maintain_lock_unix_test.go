//go:build unix

package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
)

// A process forked while a maintenance holds its lock keeps a copy of the
// lock's descriptor until it execs (O_CLOEXEC), which on a busy machine
// can take a while; the lock must still be free for the next maintenance
// as soon as the first one is done. Here the copy is a second descriptor of
// the same open file (dup), still open after the unlock, as a forked
// child's would be.
func TestMaintenanceUnlockWithChildCopy(t *testing.T) {
	t.Parallel()
	s, unlock := lockedWithLoose(t)
	pack, err := os.Stat(filepath.Join(s.path, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	var lockFD *os.File
	for _, n := range openFDs(t) {
		fi, err := os.Stat("/proc/self/fd/" + strconv.Itoa(n))
		if err != nil || !os.SameFile(fi, pack) {
			continue
		}
		// the one with the flock, not another open of the directory
		if info, err := os.ReadFile("/proc/self/fdinfo/" + strconv.Itoa(n)); err == nil && strings.Contains(string(info), "FLOCK") {
			// a second descriptor of the same open file description
			dup, err := syscall.Dup(n)
			if err != nil {
				t.Fatal(err)
			}
			syscall.CloseOnExec(dup)
			lockFD = os.NewFile(uintptr(dup), "maintenance lock")
			break
		}
	}
	if lockFD == nil {
		t.Fatal("no descriptor of this process holds an flock on objects/pack")
	}
	defer lockFD.Close()
	unlock()
	if !s.maintain(context.Background()) {
		t.Error("maintenance did not run after the unlock: a copy of the descriptor kept the lock")
	}
	if loose, packs := looseAndPacks(t, s.path); loose != 0 || packs != 1 {
		t.Errorf("after maintenance: %d loose objects, %d packs; want 0 and 1", loose, packs)
	}
}

// openFDs lists this process's descriptors (Linux's /proc/self/fd; the
// test is skipped without it).
func openFDs(t *testing.T) []int {
	t.Helper()
	names, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("no /proc/self/fd:", err)
	}
	var out []int
	for _, n := range names {
		if fd, err := strconv.Atoi(n.Name()); err == nil {
			out = append(out, fd)
		}
	}
	return out
}
