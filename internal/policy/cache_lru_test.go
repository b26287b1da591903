//go:build linux

package policy

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// modTime is the modification time of the file at path.
func modTime(t *testing.T, path string) time.Time {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.ModTime()
}

// TestCacheEvictLeastRecentlyUsed: a policy written long ago and used on
// every command keeps its cache while one-off policies, each written once
// since, come and go: eviction goes by last use, not by last write. The
// commands are two minutes apart, on a clock of the test's (the writes'
// times set to it).
func TestCacheEvictLeastRecentlyUsed(t *testing.T) {
	texts := []string{bench1000(100)}
	for i := range CacheMaxFiles + 1 {
		texts = append(texts, bench1000(20+i))
	}
	s := newSlotsCase(t, texts...)
	s.cache.settledAt = settledNow
	clock := time.Now().Add(-24 * time.Hour).Truncate(time.Second)
	s.cache.now = func() time.Time { return clock }
	s.load(t, 0)
	if err := os.Chtimes(s.slot(t, 0), clock, clock); err != nil {
		t.Fatal(err)
	}
	for k := 1; k < len(s.policies); k++ {
		clock = clock.Add(2 * time.Minute)
		if !s.load(t, 0) {
			t.Fatalf("command %d: the cache of the policy used on every command was not used", k)
		}
		if got := modTime(t, s.slot(t, 0)); !got.Equal(clock) {
			t.Fatalf("command %d: the use of the cache was not recorded: its time is %v, want %v", k, got, clock)
		}
		if s.load(t, k) {
			t.Fatalf("command %d: a hit on a policy never loaded", k)
		}
		written := clock.Add(time.Second)
		if err := os.Chtimes(s.slot(t, k), written, written); err != nil {
			t.Fatal(err)
		}
	}
	var want []string
	for _, i := range append([]int{0}, seq(len(s.policies)-CacheMaxFiles+1, len(s.policies))...) {
		want = append(want, filepath.Base(s.slot(t, i)))
	}
	slices.Sort(want)
	if got := s.caches(t); !slices.Equal(got, want) {
		t.Fatalf("the store holds %v, want the policy used on every command's and the %d newest: %v", got, CacheMaxFiles-1, want)
	}
}

// seq is from, from+1, ..., to-1.
func seq(from, to int) []int {
	var s []int
	for i := from; i < to; i++ {
		s = append(s, i)
	}
	return s
}

// TestCacheUseRecordedOnceAMinute: a hit writes the cache's time only when
// it is a minute or more from the clock's, behind or ahead, and never the
// cache itself; a cache of Path alone (no directory of caches to evict
// from) is never touched.
func TestCacheUseRecordedOnceAMinute(t *testing.T) {
	s := newSlotsCase(t, bench1000(100))
	s.cache.settledAt = settledNow
	s.load(t, 0)
	slot := s.slot(t, 0)
	ino := inode(t, slot)
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(slot, at, at); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		what      string
		clock     time.Time
		recording bool
	}{
		{"59 s after", at.Add(59 * time.Second), false},
		{"at the minute", at.Add(time.Minute), true},
		{"59 s before", at.Add(time.Minute - 59*time.Second), false},
		{"a minute before (the cache's time ahead of the clock)", at, true},
		{"the same second", at, false},
	} {
		before := modTime(t, slot)
		s.cache.now = func() time.Time { return c.clock }
		if !s.load(t, 0) {
			t.Fatalf("%s: the cache was not used", c.what)
		}
		want := before
		if c.recording {
			want = c.clock
		}
		if got := modTime(t, slot); !got.Equal(want) {
			t.Fatalf("%s: the cache's time is %v, want %v", c.what, got, want)
		}
		if inode(t, slot) != ino {
			t.Fatalf("%s: the cache was written again", c.what)
		}
	}
	// one cache file (Path): no eviction, so no use to record
	one := s.cache
	one.Dir, one.Path = "", slot
	one.now = func() time.Time { return at.Add(time.Hour) }
	before := modTime(t, slot)
	if _, hit, err := loadCached(s.policies[0], one, 0); err != nil || !hit {
		t.Fatalf("the cache at Path: hit %v, %v", hit, err)
	}
	if got := modTime(t, slot); !got.Equal(before) {
		t.Fatalf("the cache at Path was touched: %v, was %v", got, before)
	}
}

// TestCacheUseStaysInStore: a cache used through a symbolic link in the
// store to a file outside it (planted by whoever can write the store) is
// used, but the time of the file outside is not moved: the user's files
// are not the store's to touch.
func TestCacheUseStaysInStore(t *testing.T) {
	s := newSlotsCase(t, bench1000(100))
	s.cache.settledAt = settledNow
	s.load(t, 0)
	slot := s.slot(t, 0)
	outside := filepath.Join(t.TempDir(), "user-file")
	b, err := os.ReadFile(slot)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(outside, b, 0o600); err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(-time.Hour).Truncate(time.Second)
	if err := os.Chtimes(outside, at, at); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(slot); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, slot); err != nil {
		t.Fatal(err)
	}
	s.cache.now = func() time.Time { return at.Add(time.Hour) }
	if !s.load(t, 0) {
		t.Fatal("the cache (a link to a valid cache) was not used")
	}
	if got := modTime(t, outside); !got.Equal(at) {
		t.Fatalf("the file outside the store was touched: its time is %v, was %v", got, at)
	}
}
