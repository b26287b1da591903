//go:build linux

package policy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// slotsCase is n projects, each with its policy file, sharing one store
// directory of caches (Cache.Dir), as two checkouts or two --config files
// used with one store do.
type slotsCase struct {
	store    string
	policies []string
	cache    Cache
}

func newSlotsCase(t *testing.T, texts ...string) slotsCase {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	s := slotsCase{store: t.TempDir()}
	s.cache = Cache{Dir: s.store, Build: "build-1", Key: keyOf(userKey)}
	for i, text := range texts {
		dir := filepath.Join(t.TempDir(), "proj"+string(rune('a'+i)))
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, DefaultFileName)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s.policies = append(s.policies, p)
	}
	return s
}

// load loads policy i through the store's caches (every file cached),
// failing t unless it is what the full parse gives.
func (s slotsCase) load(t *testing.T, i int) bool {
	t.Helper()
	f, hit, err := loadCached(s.policies[i], s.cache, 0)
	sameLoad(t, filepath.Base(filepath.Dir(s.policies[i])), s.policies[i], f, err)
	return hit
}

// slot is the cache file of policy i.
func (s slotsCase) slot(t *testing.T, i int) string {
	t.Helper()
	name, ok := cacheSlot(s.policies[i])
	if !ok {
		t.Fatal("no slot")
	}
	return filepath.Join(s.store, name)
}

// caches are the names of the caches in the store.
func (s slotsCase) caches(t *testing.T) []string {
	t.Helper()
	entries, err := os.ReadDir(s.store)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// inode is the inode of the file at path: a cache written again (a new
// file renamed into place) has another.
func inode(t *testing.T, path string) uint64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		t.Skip("no inode on this system")
	}
	return st.Ino
}

// TestCacheAlternate: two policy files used in turn with one store each
// keep their cache: every load after the first of each is a hit, and no
// cache is written again.
func TestCacheAlternate(t *testing.T) {
	s := newSlotsCase(t, bench1000(300), bench1000(200))
	// the files' stat lines are recorded at once: a load finding one
	// settled since would rightly write the cache again
	s.cache.settledAt = settledNow
	for i := range s.policies {
		if s.load(t, i) {
			t.Fatalf("policy %d: a hit before any cache was written", i)
		}
	}
	inodes := []uint64{inode(t, s.slot(t, 0)), inode(t, s.slot(t, 1))}
	for round := range 3 {
		for i := range s.policies {
			if !s.load(t, i) {
				t.Fatalf("round %d, policy %d: the cache was not used", round, i)
			}
			if got := inode(t, s.slot(t, i)); got != inodes[i] {
				t.Fatalf("round %d, policy %d: its cache was written again", round, i)
			}
		}
	}
	if got := s.caches(t); len(got) != 2 {
		t.Fatalf("the store holds %v, want the two caches", got)
	}
}

// TestCacheSlotNeverStale: a policy file changed (the same size) between
// alternations is parsed again, never read from its old cache, and the
// other file's cache is still used; a cache of the same bytes at another
// path, put in a file's slot, is not used for it (the file line).
func TestCacheSlotNeverStale(t *testing.T) {
	text := bench1000(300)
	s := newSlotsCase(t, text, text)
	s.load(t, 0)
	s.load(t, 1)
	changed := strings.Replace(text, "docs/doc-42.md", "docs/doc-24.md", 1)
	if len(changed) != len(text) || changed == text {
		t.Fatal("the edit changes the size or nothing")
	}
	if err := os.WriteFile(s.policies[0], []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	if s.load(t, 0) {
		t.Fatal("the cache of the file before its edit was used")
	}
	if !s.load(t, 1) || !s.load(t, 0) {
		t.Fatal("the caches were not used after the edit")
	}
	// the second file's cache, whose bytes the first file now has again
	if err := os.WriteFile(s.policies[0], []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	other, err := os.ReadFile(s.slot(t, 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(s.slot(t, 0), other, 0o600); err != nil {
		t.Fatal(err)
	}
	if s.load(t, 0) {
		t.Fatal("the cache of another path was used")
	}
	if !s.load(t, 0) {
		t.Fatal("the cache written again was not used")
	}
}

// TestCacheEvict: the store keeps at most maxFiles caches whose sizes add
// up to at most maxBytes, the oldest written removed first and the one
// just written always kept; a cache file of format 3 goes at the first
// write.
func TestCacheEvict(t *testing.T) {
	s := newSlotsCase(t, bench1000(100), bench1000(110), bench1000(120), bench1000(130), bench1000(140))
	old := filepath.Join(s.store, CacheFile)
	if err := os.WriteFile(old, []byte("readproof-policy-cache/3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s.cache.maxFiles = 3
	at := time.Now().Add(-time.Hour)
	var sizes []int64
	for i := range s.policies {
		s.load(t, i)
		// written in this order, a second apart
		if err := os.Chtimes(s.slot(t, i), at, at.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(s.slot(t, i))
		if err != nil {
			t.Fatal(err)
		}
		sizes = append(sizes, fi.Size())
	}
	want := func(what string, policies ...int) {
		t.Helper()
		var names []string
		for _, i := range policies {
			names = append(names, filepath.Base(s.slot(t, i)))
		}
		slices.Sort(names)
		if got := s.caches(t); !slices.Equal(got, names) {
			t.Fatalf("%s: the store holds %v, want %v", what, got, names)
		}
	}
	want("three at most", 2, 3, 4)
	// the byte bound: the first cache, written again, and the oldest
	// other one (the smallest) would fit, but the newer ones do not, and
	// the oldest go first
	if sizes[2]+50 > sizes[3] {
		t.Fatalf("the caches' sizes %v do not grow", sizes)
	}
	s.cache.maxBytes = int(sizes[0] + sizes[2] + 50)
	if s.load(t, 0) {
		t.Fatal("an evicted cache was used")
	}
	want("bytes", 0)
	// the one just written is kept even alone over the bound
	s.cache.maxBytes = 10
	if !s.load(t, 0) || s.load(t, 1) {
		t.Fatal("the caches were not as kept")
	}
	want("over the bound alone", 1)
}

// TestCacheResourcesBound: a cache whose resources and index take more
// than maxResources bytes (math.MaxInt32: where each resource starts is an
// int32) is not written, and one read is not used, without an error; at
// the bound exactly it is. The bound is lowered to a small policy's own
// size rather than a policy of 2 GB written.
func TestCacheResourcesBound(t *testing.T) {
	s := newSlotsCase(t, bench1000(50))
	s.load(t, 0)
	b, err := os.ReadFile(s.slot(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	n := resourcesLen(b)
	if n < 1000 {
		t.Fatalf("the resources take %d bytes", n)
	}
	// at the bound: read, and written
	s.cache.maxResources = n
	if !s.load(t, 0) {
		t.Fatal("a cache at the bound was not used")
	}
	if err := os.Remove(s.slot(t, 0)); err != nil {
		t.Fatal(err)
	}
	s.load(t, 0)
	if !s.load(t, 0) {
		t.Fatal("a cache at the bound was not written")
	}
	// a byte over: the cache there is not used, and none is written
	s.cache.maxResources = n - 1
	if s.load(t, 0) {
		t.Fatal("a cache over the bound was used")
	}
	if err := os.Remove(s.slot(t, 0)); err != nil {
		t.Fatal(err)
	}
	if s.load(t, 0) {
		t.Fatal("a hit without a cache")
	}
	if got := s.caches(t); len(got) != 0 {
		t.Fatalf("a cache over the bound was written: %v", got)
	}
}

// TestCacheResourcesLenNoCopy: the bound's check of a cache about to be
// written reads it in place: it runs on caches of up to 2 GiB, which a
// copy (a []byte made a string) would hold two and three times over.
func TestCacheResourcesLenNoCopy(t *testing.T) {
	s := newSlotsCase(t, bench1000(50))
	s.load(t, 0)
	b, err := os.ReadFile(s.slot(t, 0))
	if err != nil {
		t.Fatal(err)
	}
	want := resourcesLen(b)
	if got := testing.AllocsPerRun(10, func() { want = resourcesLen(b) }); got != 0 {
		t.Fatalf("resourcesLen of a cache of %d bytes made %v allocations, want none", len(b), got)
	}
	if want < 1000 {
		t.Fatalf("the resources take %d bytes", want)
	}
}

// TestCacheSlotPaths: a slot follows the path as given, made absolute,
// whatever it spells (letters of any script, spaces): a file and a
// symbolic link to it are two names with a cache each, both used; the
// link pointed at another file of the same size is read from that file,
// not from its old cache, and so is a file replaced by a rename.
func TestCacheSlotPaths(t *testing.T) {
	text := bench1000(300)
	s := newSlotsCase(t, text)
	dir := filepath.Join(filepath.Dir(s.policies[0]), "projets d'été ✓")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, DefaultFileName)
	if err := os.Rename(s.policies[0], file); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), "lien vers ✓.toml")
	if err := os.Symlink(file, link); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	other := filepath.Join(t.TempDir(), DefaultFileName)
	changed := strings.Replace(text, "docs/doc-42.md", "docs/doc-24.md", 1)
	if err := os.WriteFile(other, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	s.policies = []string{file, link, other}
	s.cache.settledAt = settledNow
	for i := range 2 {
		if s.load(t, i) {
			t.Fatalf("name %d: a hit before any cache was written", i)
		}
		if !s.load(t, i) {
			t.Fatalf("name %d: its cache was not used", i)
		}
		if name := filepath.Base(s.slot(t, i)); !isCacheSlot(name) {
			t.Fatalf("name %d: its cache %q is not named as a cache", i, name)
		}
	}
	if got := s.caches(t); len(got) != 2 || s.slot(t, 0) == s.slot(t, 1) {
		t.Fatalf("the store holds %v, want a cache for each name", got)
	}
	// the link pointed at another file (load compares with its full parse)
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, link); err != nil {
		t.Fatal(err)
	}
	if s.load(t, 1) {
		t.Fatal("the link's cache of the file it pointed at before was used")
	}
	if !s.load(t, 1) || !s.load(t, 0) {
		t.Fatal("the caches were not used after the link moved")
	}
	// another file renamed to the file's name
	if err := os.Rename(other, file); err != nil {
		t.Fatal(err)
	}
	if s.load(t, 0) {
		t.Fatal("the cache of the file replaced by a rename was used")
	}
}

// TestCacheEvictOnlyCaches: eviction removes regular files named as
// caches alone: not a temporary file of a writer under way, a link or a
// directory at a cache's name, names close to a cache's, nor git's files.
func TestCacheEvictOnlyCaches(t *testing.T) {
	s := newSlotsCase(t, bench1000(100), bench1000(110))
	s.cache.maxFiles = 1
	s.load(t, 0)
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	keep := []string{
		"HEAD", "config", CacheFile + "-0123456789abcdef-1234.lock", CacheFile + "-0123456789ABCDEF",
		CacheFile + "-0123456789abcde", CacheFile + "-0123456789abcdef0", CacheFile + "-0123456789abcdeg",
		CacheFile + ".bak", "x" + CacheFile + "-0123456789abcdef",
	}
	for _, name := range keep {
		if err := os.WriteFile(filepath.Join(s.store, name), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link, sub := CacheFile+"-1111111111111111", CacheFile+"-2222222222222222"
	if err := os.Symlink(outside, filepath.Join(s.store, link)); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.Mkdir(filepath.Join(s.store, sub), 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
	for _, name := range append(keep, s.slot(t, 0)) {
		if err := os.Chtimes(filepath.Join(s.store, filepath.Base(name)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	s.load(t, 1)
	want := append(slices.Clone(keep), link, sub, filepath.Base(s.slot(t, 1)))
	slices.Sort(want)
	if got := s.caches(t); !slices.Equal(got, want) {
		t.Fatalf("the store holds %v, want %v", got, want)
	}
	if _, err := os.Stat(outside); err != nil {
		t.Fatalf("the file a link at a cache's name points at: %v", err)
	}
}
