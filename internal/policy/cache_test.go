package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// cacheCase is a project directory with a policy file and a cache beside it.
type cacheCase struct {
	policy string
	cache  Cache
}

func newCacheCase(t testing.TB, text string) cacheCase {
	dir := t.TempDir()
	c := cacheCase{policy: filepath.Join(dir, DefaultFileName), cache: Cache{Path: filepath.Join(dir, CacheFile), Build: "build-1", Key: keyOf(userKey)}}
	c.write(t, text)
	return c
}

// userKey is the tests' policy cache key (the user's); otherKey another.
var userKey, otherKey = []byte("the user's key, 32 bytes long..."), []byte("another key, not the user's one.")

// keyOf is a Cache.Key returning key.
func keyOf(key []byte) func() []byte { return func() []byte { return key } }

func (c cacheCase) write(t testing.TB, text string) {
	if err := os.WriteFile(c.policy, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// load is loadCached of the case, with every file cached (minBytes 0)
// when small is set.
func (c cacheCase) load(t testing.TB, small bool) (*File, bool, error) {
	min := CacheMinBytes
	if small {
		min = 0
	}
	return loadCached(c.policy, c.cache, min)
}

// sameLoad fails t unless f, err is what Load gives for path.
func sameLoad(t testing.TB, what, path string, f *File, err error) {
	t.Helper()
	want, werr := Load(path)
	if fmt.Sprint(err) != fmt.Sprint(werr) {
		t.Fatalf("%s: error %v, the full parse's %v", what, err, werr)
	}
	if werr == nil && !sameFile(f, want) {
		t.Fatalf("%s: the file differs from the full parse's", what)
	}
	if werr != nil && !reflect.DeepEqual(err, werr) {
		t.Fatalf("%s: error %#v, the full parse's %#v", what, err, werr)
	}
}

// sameFile reports whether f, perhaps read from the cache, is the File
// want (parsed): the same settings, each resource found by Lookup as
// declared (asked before Resources, which decodes them all, and after),
// and the same Resources.
func sameFile(f, want *File) bool {
	if !sameSettings(f, want) {
		return false
	}
	lookups := func() bool {
		for _, r := range want.Resources() {
			got, ok := f.Lookup(r.URI)
			if !ok || !reflect.DeepEqual(*got, r) {
				return false
			}
		}
		return true
	}
	return lookups() && reflect.DeepEqual(f.Resources(), want.Resources()) && lookups()
}

// big1000 is a policy file of n resources of every kind, above
// CacheMinBytes from n = 700.
func big1000(n int) string {
	return bench1000(n) + "\n[defaults]\nmax_bytes = \"2MiB\"\n"
}

func TestCacheHitMatchesParse(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(2000))
	f, hit, err := c.load(t, false)
	if hit {
		t.Fatal("a cache was used before one was written")
	}
	sameLoad(t, "first load", c.policy, f, err)
	if _, err := os.Stat(c.cache.Path); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
	f, hit, err = c.load(t, false)
	if !hit {
		t.Fatal("the cache written was not used")
	}
	sameLoad(t, "cached load", c.policy, f, err)
	if r, ok := f.Lookup(f.Resources()[1234].URI); !ok || r != &f.Resources()[1234] {
		t.Fatal("Lookup of a cached file does not find its resources")
	}
	if leftover, _ := filepath.Glob(c.cache.Path + "-*"); len(leftover) != 0 {
		t.Fatalf("temporary files left: %v", leftover)
	}
}

// TestCacheNeverStale: a changed file, of the same size or not, is parsed
// again and cached anew; the cache of another build is not used.
func TestCacheNeverStale(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	text := big1000(1000)
	c := newCacheCase(t, text)
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	for _, edit := range []string{
		strings.Replace(text, "docs/doc-999.md", "docs/doc-998.md", 1), // same size
		strings.Replace(text, "docs/doc-3.md", "docs/doc-3.markdown", 1),
		strings.Replace(text, "max_bytes = \"2MiB\"", "max_bytes = \"3MiB\"", 1),                       // settings only
		strings.Replace(text, "readproof://bench/docs/doc-999\"", "readproof://bench/docs/doc-0\"", 1), // a duplicate
	} {
		c.write(t, edit)
		f, hit, err := c.load(t, false)
		if hit {
			t.Fatal("the cache of other bytes was used")
		}
		sameLoad(t, "edited file", c.policy, f, err)
		if err == nil {
			if f2, hit, err := c.load(t, false); !hit || err != nil {
				t.Fatalf("the edited file was not cached: hit %v, %v", hit, err)
			} else {
				sameLoad(t, "edited file, cached", c.policy, f2, err)
			}
		}
	}
	c.cache.Build = "build-2"
	if _, hit, _ := c.load(t, false); hit {
		t.Fatal("the cache of another build was used")
	}
}

// TestCacheDamaged: a cache changed in any byte, cut short, or with a
// wrong sum, is parsed past.
func TestCacheDamaged(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.cache.Path)
	if err != nil {
		t.Fatal(err)
	}
	for _, at := range []int{0, 30, 100, 200, len(good) / 2, len(good) - 10} {
		bad := append([]byte(nil), good...)
		bad[at] ^= 0x20
		for _, b := range [][]byte{bad, good[:at]} {
			if err := os.WriteFile(c.cache.Path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			f, hit, err := c.load(t, false)
			if hit {
				t.Fatalf("a damaged cache (byte %d) was used", at)
			}
			sameLoad(t, "damaged cache", c.policy, f, err)
		}
	}
}

// TestCachePlanted: a cache of the right format, build and policy hash
// whose resource points elsewhere, sealed without the user's key (with
// another key, or none), is not used: the load is the full parse of the
// file and the cache is written anew. The same cache sealed with the
// user's key is used: the MAC alone stops it.
func TestCachePlanted(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(c.cache.Path)
	if err != nil {
		t.Fatal(err)
	}
	body := good[:len(good)-macLine]
	const real, evil = "https://docs.internal/400", "https://evil.example/4000"
	if strings.Count(string(body), real) != 1 {
		t.Fatalf("the cache holds %q %d times", real, strings.Count(string(body), real))
	}
	planted := []byte(strings.Replace(string(body), real, evil, 1))
	withCRC := append([]byte(strings.Replace(string(planted), cacheFormat, "readproof-policy-cache/1", 1)), "crc 00000000\n"...)
	for _, p := range []struct {
		what string
		b    []byte
	}{
		{"sealed with another key", appendMAC(slices.Clone(planted), otherKey)},
		{"sealed with an empty key", appendMAC(slices.Clone(planted), nil)},
		{"with the user's MAC of the real resources", append(slices.Clone(planted), good[len(body):]...)},
		{"without a MAC", slices.Clone(planted)},
		{"in format 1, with a CRC", withCRC},
	} {
		if err := os.WriteFile(c.cache.Path, p.b, 0o644); err != nil {
			t.Fatal(err)
		}
		f, hit, err := c.load(t, false)
		if hit {
			t.Fatalf("a planted cache %s was used", p.what)
		}
		sameLoad(t, "planted cache "+p.what, c.policy, f, err)
		if again, err := os.ReadFile(c.cache.Path); err != nil || string(again) != string(good) {
			t.Fatalf("the planted cache %s was not replaced: %v", p.what, err)
		}
	}
	// the control: the planted resources under the user's key are taken
	if err := os.WriteFile(c.cache.Path, appendMAC(slices.Clone(planted), userKey), 0o644); err != nil {
		t.Fatal(err)
	}
	f, hit, err := c.load(t, false)
	if err != nil || !hit {
		t.Fatalf("the control was not used: hit %v, %v", hit, err)
	}
	if r := f.Resources()[400]; r.URI.Path != "web/doc-400" || r.Source.URL != evil {
		t.Fatalf("the control's resource: %+v", r)
	}
}

// TestCacheNoKey: without a key the cache is neither read nor written.
func TestCacheNoKey(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	for _, key := range []func() []byte{nil, keyOf(nil)} {
		c.cache.Key = key
		f, _, err := c.load(t, false)
		sameLoad(t, "no key", c.policy, f, err)
		if _, err := os.Stat(c.cache.Path); err == nil {
			t.Fatal("a cache was written without a key")
		}
	}
	c.cache.Key = keyOf(userKey)
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	asked := 0
	c.cache.Key = func() []byte { asked++; return nil }
	f, hit, err := c.load(t, false)
	if hit || asked != 1 {
		t.Fatalf("without a key: hit %v, the key asked for %d times", hit, asked)
	}
	sameLoad(t, "no key, a cache there", c.policy, f, err)
}

// TestCacheNoKeyWhereNoCache: a store that cannot take a cache (here its
// directory is gone; a read-only mount or a full disk fail the same way)
// and holds none makes no key: the user's config directory is not written
// for a cache that can never be. Where the cache can be written the key is
// asked for once.
func TestCacheNoKeyWhereNoCache(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	asked := 0
	c.cache.Key = func() []byte { asked++; return userKey }
	c.cache.Path = filepath.Join(filepath.Dir(c.policy), "gone", CacheFile)
	f, hit, err := c.load(t, false)
	if hit || asked != 0 {
		t.Fatalf("a store that cannot take a cache: hit %v, the key asked for %d times", hit, asked)
	}
	sameLoad(t, "no cache possible", c.policy, f, err)
	if err := os.Mkdir(filepath.Dir(c.cache.Path), 0o700); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.load(t, false); err != nil || asked != 1 {
		t.Fatalf("a store that takes the cache: %v, the key asked for %d times", err, asked)
	}
	if _, err := os.Stat(c.cache.Path); err != nil {
		t.Fatalf("no cache written: %v", err)
	}
}

// TestCacheSettingsAgain: the settings are parsed again at every load, so
// what they depend on outside the file (here the home directory "~"
// names) is as the full parse finds it, errors included.
func TestCacheSettingsAgain(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	text := strings.Replace(big1000(1000), "[sources]\n", "[sources]\nroots = [\"~/docs\"]\n", 1)
	c := newCacheCase(t, text)
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", t.TempDir())
	f, hit, err := c.load(t, false)
	if !hit {
		t.Fatal("the cache was not used")
	}
	sameLoad(t, "another home", c.policy, f, err)
	if f.Roots[0] == filepath.Join(home, "docs") {
		t.Fatal("the roots of the earlier home were kept")
	}
	os.Unsetenv("HOME")
	f, hit, err = c.load(t, false)
	if hit || err == nil {
		t.Fatalf("no home: hit %v, error %v", hit, err)
	}
	sameLoad(t, "no home", c.policy, f, err)
}

// TestCacheNotOurs: a directory Ours refuses gets no cache; a small file
// none either.
func TestCacheNotOurs(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	asked := 0
	c.cache.Ours = func() bool { asked++; return false }
	f, _, err := c.load(t, false)
	sameLoad(t, "not ours", c.policy, f, err)
	if _, err := os.Stat(c.cache.Path); err == nil || asked != 1 {
		t.Fatalf("a cache was written where Ours refused it (asked %d)", asked)
	}
	c = newCacheCase(t, bench1000(10))
	if _, err := LoadCached(c.policy, c.cache); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.cache.Path); err == nil {
		t.Fatal("a small file was cached")
	}
}

// TestCacheResourceFields: the cache writes every field of a Resource;
// a field added to Resource, its Source, URI or Freshness must be added to
// appendResource and cacheReader.resource, and counted here.
func TestCacheResourceFields(t *testing.T) {
	for _, c := range []struct {
		v any
		n int
	}{{Resource{}, 6}, {Resource{}.Source, 10}, {Resource{}.URI, 3}, {Freshness{}, 3}} {
		if got := reflect.TypeOf(c.v).NumField(); got != c.n {
			t.Errorf("%T has %d fields, the cache writes %d", c.v, got, c.n)
		}
	}
}

// FuzzCacheMatchesParse holds a cached load, written and then read, to
// the full parse of the same bytes: the same File, or the same error.
func FuzzCacheMatchesParse(f *testing.F) {
	addPolicySeeds(f)
	f.Add([]byte(bench1000(4)))
	f.Add([]byte("version = 1\n[defaults]\npolicy = \"allow_stale\"\nmax_age = \"1h\"\n[[resource]]\nuri = \"readproof://a/b\"\n[resource.source]\ntype = \"http\"\nurl = \"https://h/x\"\npublic_headers = { Accept = \"text/plain\" }\n[network]\nallow_hosts = [\"h\"]\n[[resource]]\nuri = \"readproof://a/c\"\npolicy = \"pinned\"\nsnapshot = \"0123456789012345678901234567890123456789\"\ncontent_type = \"text/plain\"\ndescription = \"d\"\nsource = { type = \"github\", owner = \"o\", repo = \"r\", path = \"p\", token_env = \"T\" }\n[sources]\nenv = [\"T\"]\n"))
	f.Add([]byte("resource = [{ uri = \"readproof://a/b\", source = { type = \"filesystem\", path = \"p\" } }]\n"))
	f.Add([]byte("\ufeffversion = 1\r\n[[resource]]\r\nuri = \"readproof://a/b\"\r\nsource = { type = \"filesystem\", path = \"p\" }"))
	os.Setenv("HOME", f.TempDir())
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > maxFuzzPolicy {
			return
		}
		c := newCacheCase(t, string(data))
		for _, what := range []string{"first load", "second load"} {
			got, _, err := c.load(t, true)
			sameLoad(t, what, c.policy, got, err)
		}
	})
}

// BenchmarkLoadCached10000 loads a policy file of 10,000 resources from
// its cache (BenchmarkLoad10000: the same file parsed).
func BenchmarkLoadCached10000(b *testing.B) {
	c := newCacheCase(b, bench1000(10000))
	if _, _, err := c.load(b, false); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if f, hit, err := c.load(b, false); err != nil || !hit || len(f.Resources()) != 10000 {
			b.Fatal(hit, err)
		}
	}
}

func BenchmarkLoad10000(b *testing.B) {
	c := newCacheCase(b, bench1000(10000))
	b.ReportAllocs()
	for b.Loop() {
		if f, err := Load(c.policy); err != nil || len(f.Resources()) != 10000 {
			b.Fatal(err)
		}
	}
}

// FuzzCacheFile: whatever the cache file holds, a load does not fail
// because of it; one not sealed with the user's key is never used (the
// load is the full parse), and one sealed with it is read without a
// panic.
func FuzzCacheFile(f *testing.F) {
	c := newCacheCase(f, bench1000(4))
	if _, _, err := c.load(f, true); err != nil {
		f.Fatal(err)
	}
	good, err := os.ReadFile(c.cache.Path)
	if err != nil {
		f.Fatal(err)
	}
	body := good[:len(good)-macLine]
	f.Add(body)
	f.Add([]byte(strings.Replace(string(body), "docs/doc-0.md", "docs/doc-9.md", 1)))
	f.Add([]byte(strings.Replace(string(body), "resources 4", "resources 9", 1)))
	f.Add([]byte(cacheFormat + "\n"))
	// a size far beyond the file's, and as many settings ranges
	f.Add([]byte(regexp.MustCompile(`(?m)^(policy [0-9a-f]{64}) [0-9]+\n(stat [^\n]*\n)settings [0-9]+\n`).ReplaceAllString(string(body), "$1 999999999999\n${2}settings 999999999999\n")))
	text, err := os.ReadFile(c.policy)
	if err != nil {
		f.Fatal(err)
	}
	os.Setenv("HOME", f.TempDir())
	f.Fuzz(func(t *testing.T, data []byte) {
		c := newCacheCase(t, string(text))
		for _, b := range [][]byte{data, appendMAC(slices.Clone(data), otherKey)} {
			if err := os.WriteFile(c.cache.Path, b, 0o644); err != nil {
				t.Fatal(err)
			}
			got, hit, err := c.load(t, true)
			if hit {
				t.Fatal("a cache not sealed with the user's key was used")
			}
			sameLoad(t, "unsealed cache", c.policy, got, err)
		}
		if err := os.WriteFile(c.cache.Path, appendMAC(slices.Clone(data), userKey), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.load(t, true); err != nil {
			t.Fatalf("a sealed cache made the load fail: %v", err)
		}
	})
}

// parseForCache is the full parse of text as the policy file name, with
// the heads encodeCache needs.
func parseForCache(t testing.TB, name, text string) (*File, []headRun) {
	t.Helper()
	var heads []headRun
	f, ok := parseFastHeads(name, name, text, &heads)
	if !ok {
		t.Fatal("the fast parse gave up on the test's policy")
	}
	return f, heads
}
