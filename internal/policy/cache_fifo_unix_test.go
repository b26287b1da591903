//go:build unix

package policy

import (
	"os"
	"syscall"
	"testing"
)

// TestCacheFIFO: a FIFO put where the policy cache should be (by whoever
// can write the store) does not hold a command up waiting for a writer:
// it is not a regular file, so the load is the full parse, and the cache
// written then takes its place.
func TestCacheFIFO(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	if err := syscall.Mkfifo(c.cache.Path, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	f, hit, err := c.load(t, false)
	if hit {
		t.Fatal("a FIFO was read as the cache")
	}
	sameLoad(t, "a FIFO at the cache", c.policy, f, err)
	if fi, err := os.Lstat(c.cache.Path); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("the FIFO was not replaced by a cache: %v %v", fi, err)
	}
}
