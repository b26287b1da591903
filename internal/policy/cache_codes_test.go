package policy

import (
	"slices"
	"testing"
)

// TestCacheCodesBound: the cache writes a source type and a strategy as
// their places in SourceTypes and Strategies. A build whose lists differ
// (a type added or moved) but whose build line is the same (its binary's
// path, size and time, which another build can share) must not read the
// codes as other names: the cache is parsed past, and the load is the
// full parse's. Not parallel: it changes the lists while it runs.
func TestCacheCodesBound(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	c := newCacheCase(t, big1000(1000))
	if _, _, err := c.load(t, false); err != nil {
		t.Fatal(err)
	}
	if _, hit, err := c.load(t, false); !hit || err != nil {
		t.Fatalf("setup: hit %v, %v", hit, err)
	}
	types, strategies := SourceTypes, Strategies
	t.Cleanup(func() { SourceTypes, Strategies = types, strategies })
	SourceTypes = slices.Clone(types)
	SourceTypes[0], SourceTypes[1] = SourceTypes[1], SourceTypes[0]
	Strategies = slices.Clone(strategies)
	slices.Reverse(Strategies)
	f, hit, err := c.load(t, false)
	if hit {
		t.Error("a cache written with other code lists was used")
	}
	sameLoad(t, "other code lists", c.policy, f, err)
}
