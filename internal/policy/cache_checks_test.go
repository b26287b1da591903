package policy

import (
	"crypto/sha256"
	"os"
	"regexp"
	"slices"
	"strconv"
	"testing"
)

// The cache's defensive checks: a cache sealed with the user's key is one
// this package wrote, so these find only a bug of its own (the writer's or
// the reader's); each test builds such a cache with the package's writer
// and a flaw put in, and wants the load to be the full parse.

// sealedCase is a cache case whose policy file is parsed, with what
// encodeCache needs to write its cache.
type sealedCase struct {
	cacheCase
	text  string
	f     *File
	heads []headRun
}

func newSealedCase(t *testing.T) sealedCase {
	t.Helper()
	t.Setenv("HOME", t.TempDir())
	text := big1000(1000)
	c := sealedCase{cacheCase: newCacheCase(t, text), text: text}
	c.f, c.heads = parseForCache(t, c.policy, text)
	return c
}

// encode is encodeCache of f for the case's policy file, without a stat
// line (each load hashes the file), sealed with the user's key.
func (c sealedCase) encode(f *File) []byte {
	return encodeCache(c.policy, c.policy, f, c.text, c.heads, sha256.Sum256([]byte(c.text)), noStamp, buildSum(c.cache.Build), userKey)
}

// wantParsed plants cache b and fails t unless the load parses past it.
func (c sealedCase) wantParsed(t *testing.T, what string, b []byte) {
	t.Helper()
	if err := os.WriteFile(c.cache.Path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	f, hit, err := c.load(t, false)
	if hit {
		t.Fatalf("a cache %s was used", what)
	}
	sameLoad(t, what, c.policy, f, err)
}

// TestCacheSealedControl: the writer's cache, unchanged, is used; what the
// tests below change is all that makes theirs parsed past.
func TestCacheSealedControl(t *testing.T) {
	c := newSealedCase(t)
	if err := os.WriteFile(c.cache.Path, c.encode(c.f), 0o600); err != nil {
		t.Fatal(err)
	}
	f, hit, err := c.load(t, false)
	if !hit {
		t.Fatal("the writer's own cache was not used")
	}
	sameLoad(t, "the writer's cache", c.policy, f, err)
}

// TestCacheSameSettings: the writer caches a File only when the file's
// text without its resource blocks gives its settings; a File whose
// settings the text does not give (here its [defaults] max_bytes) is not
// cached, so no load can return settings other than the text's.
func TestCacheSameSettings(t *testing.T) {
	c := newSealedCase(t)
	if c.encode(c.f) == nil {
		t.Fatal("the control: the parsed File was not cached")
	}
	g := *c.f
	g.Defaults.MaxBytes++
	if b := c.encode(&g); b != nil {
		c.wantParsed(t, "of settings its text does not give", b)
		t.Fatal("a File whose settings its text does not give was cached")
	}
}

// TestCacheSettingsWithResource: settings ranges that take in a resource
// block (sealed, so written by a buggy writer) are parsed past: the
// cached load would otherwise hold that resource twice.
func TestCacheSettingsWithResource(t *testing.T) {
	c := newSealedCase(t)
	good := c.encode(c.f)
	body := good[:len(good)-macLine]
	// version = 1, [sources], then the resources, then [defaults]
	line := regexp.MustCompile(`(?m)^settings 3\n0 12\n12 ([0-9]+)\n`)
	m := line.FindSubmatch(body)
	if m == nil {
		t.Fatalf("no settings ranges as expected in %q", body[:200])
	}
	first, _ := strconv.Atoi(string(m[1])) // the first resource block's start
	next := regexp.MustCompile(`\n\[\[resource\]\]`).FindAllStringIndex(c.text[first:], 2)[1][0] + first + 1
	bad := line.ReplaceAll(slices.Clone(body), []byte("settings 3\n0 12\n12 "+strconv.Itoa(next)+"\n"))
	c.wantParsed(t, "whose settings hold a resource", appendMAC(bad, userKey))
}

// TestCacheLookupOrder: a sealed cache whose Lookup index is not in
// increasing URI order, or names a resource past the last, is parsed past:
// Lookup's binary search would miss a declared resource.
func TestCacheLookupOrder(t *testing.T) {
	c := newSealedCase(t)
	for _, k := range []int{0, 500, len(c.f.byURI) - 2} {
		g := *c.f
		g.byURI = slices.Clone(c.f.byURI)
		g.byURI[k], g.byURI[k+1] = g.byURI[k+1], g.byURI[k]
		c.wantParsed(t, "whose index is out of order at "+strconv.Itoa(k), c.encode(&g))
	}
	g := *c.f
	g.byURI = slices.Clone(c.f.byURI)
	g.byURI[7] = int32(len(g.byURI))
	c.wantParsed(t, "whose index names a resource past the last", c.encode(&g))
}
