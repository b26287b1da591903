package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLeftLockWarns: a ref transaction whose lock file cannot be removed
// after its refs moved (here packed-refs.lock, whose unlink fails with EIO)
// has done its work and exits 0, but says so on stderr: a warning that
// names the lock file left and a hint with what to do, since the next
// writer waits for that lock until it turns stale. Before session 15 the
// command exited 0 silently.
func TestLeftLockWarns(t *testing.T) {
	t.Parallel()
	strace := requireStrace(t)
	dir, uris, store, env := killProject(t, 2)
	mustRP(t, dir, "run", "--id", "r0", uris[0])
	lock := filepath.Join(store, "packed-refs.lock")
	code, stderr := failCalls(t, strace, dir, env, "unlink", lock, "EIO", "run", "--id", "r1", uris[1])
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (the run is recorded)\n%s", code, stderr)
	}
	if _, err := os.Stat(lock); err != nil {
		t.Fatalf("the failed unlink left no lock (%v): the test proves nothing", err)
	}
	checkKilled(t, dir, store, "run --id r1 with its lock's unlink failing")
	if !strings.Contains(stderr, "readproof: warning: ") || !strings.Contains(stderr, lock) ||
		!strings.Contains(stderr, "input/output error") || !strings.Contains(stderr, "readproof: hint: ") || !strings.Contains(stderr, "rm "+lock) {
		t.Fatalf("stderr:\n%s\nwant a warning naming %s and its cause, and a hint to remove it", stderr, lock)
	}
	t.Logf("stderr:\n%s", stderr)
}
