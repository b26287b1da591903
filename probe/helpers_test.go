package probe_test

import (
	"crypto/sha256"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/probe"
)

// fakeClock is a Clock tests move by hand.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func newFakeClock(t time.Time) *fakeClock { return &fakeClock{t: t} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// b0 is a bucket in 2026; at(b, s) is second s of bucket b.
const b0 = int64(5964925)

func at(b, s int64) time.Time { return time.Unix(b*300+s, 0) }

func testKeys(t testing.TB, seed string) probe.Keys {
	t.Helper()
	m := sha256.Sum256([]byte(seed))
	k, err := probe.DeriveKeys(m[:])
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func newAdj(t testing.TB, k probe.Keys, c probe.Clock, opts probe.Options) *probe.Adjudicator {
	t.Helper()
	opts.Clock = c
	a, err := probe.NewAdjudicator(k, opts)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func issue(t testing.TB, a *probe.Adjudicator, session string) string {
	t.Helper()
	s, _, err := a.Issue(session)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sprintf(format string, a ...any) string { return fmt.Sprintf(format, a...) }
