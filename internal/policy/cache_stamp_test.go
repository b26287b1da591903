//go:build linux

package policy

import (
	"crypto/sha256"
	"os"
	"strings"
	"testing"
	"time"
)

// settledNow is a Cache.settledAt under which every policy file has
// settled: the tests need not wait the seconds a real edit waits.
func settledNow(os.FileInfo) time.Time { return time.Now().Add(time.Hour) }

// stampOf is the stat line fileStamp gives for the file at path.
func stampOf(t *testing.T, path string) (string, time.Time) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	s, ctime, ok := fileStamp(fi)
	if !ok {
		t.Skip("this file system gives no inode or change time")
	}
	if typ, ok := fsType(nil, path); !ok || !keepsCtime(typ) {
		t.Skipf("this file system (type %#x) is not one whose change times the kernel keeps", typ)
	}
	return s, ctime
}

// cacheStamp is the stat line of the cache file at path.
func cacheStamp(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	_, line, ok := strings.Cut(string(b), "\nstat ")
	if !ok {
		t.Fatalf("no stat line in %q...", b[:min(200, len(b))])
	}
	line, _, _ = strings.Cut(line, "\n")
	return line
}

// TestCacheStamp: a file changed less than stampSettle ago is cached
// without its stat line; once settled, the next load (which hashes it)
// records the line, and a file put in its place (another inode, the same
// bytes) has its own line recorded in turn.
func TestCacheStamp(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	if got := cacheStamp(t, c.cache.Path); got != noStamp {
		t.Fatalf("a file written just now: stat line %q, want %q", got, noStamp)
	}
	c.cache.settledAt = settledNow
	for _, what := range []string{"settled", "put in its place"} {
		f, hit, err := c.load(t, false)
		if !hit {
			t.Fatalf("%s: the cache was not used", what)
		}
		sameLoad(t, what, c.policy, f, err)
		if want, _ := stampOf(t, c.policy); cacheStamp(t, c.cache.Path) != want {
			t.Fatalf("%s: stat line %q, want %q", what, cacheStamp(t, c.cache.Path), want)
		}
		text, err := os.ReadFile(c.policy)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(c.policy+".new", text, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(c.policy+".new", c.policy); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCacheStampTrusted: a cache whose stat line is the file's is used
// without the file being hashed, so the stat line is what binds it: a
// cache (sealed with the user's key) for other bytes but with the file's
// stat line is taken, the same without the line is not. Only the MAC
// makes this safe, which the other tests hold.
func TestCacheStampTrusted(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	text := big1000(1000)
	c := newCacheCase(t, text)
	other := strings.Replace(text, "docs/doc-999.md", "docs/doc-998.md", 1) // same size
	name := c.policy
	f, heads := parseForCache(t, name, other)
	stamp, _ := stampOf(t, c.policy)
	build := buildSum(c.cache.Build)
	for _, st := range []string{stamp, noStamp} {
		b := encodeCache(c.policy, name, f, other, heads, sha256.Sum256([]byte(other)), st, build, userKey)
		if err := os.WriteFile(c.cache.Path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, hit, err := c.load(t, false)
		if err != nil {
			t.Fatal(err)
		}
		r, ok := got.Lookup(f.Resources()[999].URI)
		switch {
		case st == stamp && (!hit || !ok || r.Source.Path != "docs/doc-998.md"):
			t.Fatalf("a cache with the file's stat line was not taken as is: hit %v, %+v", hit, r)
		case st == noStamp && hit:
			t.Fatal("a cache of other bytes without a stat line was used")
		}
	}
}

// TestCacheStampNotMtime: an edit in place of the same size whose
// modification time is set back to the one recorded is seen: the change
// time, which no one but the clock sets, differs.
func TestCacheStampNotMtime(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	text := big1000(1000)
	c := newCacheCase(t, text)
	c.cache.settledAt = settledNow
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := c.load(t, false); !hit || err != nil {
		t.Fatalf("hit %v, %v", hit, err)
	}
	fi, err := os.Stat(c.policy)
	if err != nil {
		t.Fatal(err)
	}
	_, ctime := stampOf(t, c.policy)
	// the clock the file system stamps with moves on (a tick, a few ms),
	// as stampSettle makes sure it has for a real edit
	for probe, tries := c.policy+".probe", 0; ; tries++ {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if _, pc := stampOf(t, probe); pc.After(ctime) {
			break
		}
		if tries == 5000 {
			t.Skip("the file system's change times did not move in 5 s")
		}
		time.Sleep(time.Millisecond)
	}
	edit := strings.Replace(text, "docs/doc-999.md", "docs/doc-998.md", 1)
	file, err := os.OpenFile(c.policy, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := file.WriteAt([]byte(edit), 0); err != nil {
		t.Fatal(err)
	}
	if err := file.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(c.policy, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	f, hit, err := c.load(t, false)
	if hit {
		t.Fatal("the cache of the bytes before the edit was used")
	}
	sameLoad(t, "edited, mtime set back", c.policy, f, err)
}

// TestCacheStampFileSystem: on a file system whose change times the
// kernel does not keep (FUSE: sshfs reports the mtime as the ctime, and
// `touch -r`, `cp -p` or `rsync -t` set that back; a network file system,
// stamped by the server's clock), the stat line would not bind the file's
// bytes: a cache with the file's stat line but for other bytes must not
// be taken there, and none is recorded. On ext4 it is, as
// TestCacheStampTrusted holds.
func TestCacheStampFileSystem(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	text := big1000(1000)
	for _, fs := range []struct {
		name  string
		magic uint32
		kept  bool
	}{{"fuse", 0x65735546, false}, {"nfs", 0x6969, false}, {"vfat", 0x4D44, false}, {"ext4", 0xEF53, true}} {
		c := newCacheCase(t, text)
		c.cache.settledAt = settledNow
		c.cache.fsType = func(*os.File, string) (uint32, bool) { return fs.magic, true }
		if _, _, err := c.load(t, false); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.load(t, false); err != nil {
			t.Fatal(err)
		}
		stamp, _ := stampOf(t, c.policy)
		if got := cacheStamp(t, c.cache.Path); fs.kept != (got == stamp) || !fs.kept && got != noStamp {
			t.Fatalf("%s: stat line %q after two loads, the file's is %q", fs.name, got, stamp)
		}
		other := strings.Replace(text, "docs/doc-999.md", "docs/doc-998.md", 1) // same size
		f, heads := parseForCache(t, c.policy, other)
		build := buildSum(c.cache.Build)
		b := encodeCache(c.policy, c.policy, f, other, heads, sha256.Sum256([]byte(other)), stamp, build, userKey)
		if err := os.WriteFile(c.cache.Path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		got, hit, err := c.load(t, false)
		if hit != fs.kept {
			t.Fatalf("%s: a cache of other bytes with the file's stat line: hit %v", fs.name, hit)
		}
		if !fs.kept {
			sameLoad(t, fs.name, c.policy, got, err)
		}
	}
}
