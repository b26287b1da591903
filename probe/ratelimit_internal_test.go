package probe

import (
	"fmt"
	"testing"
	"time"
)

type stepClock struct{ t time.Time }

func (c *stepClock) Now() time.Time { return c.t }

func TestLimiter(t *testing.T) {
	clk := &stepClock{t: time.Unix(1789477777, 0)}
	l := newLimiter(RateLimit{Burst: 2, Every: 10 * time.Second}, 3, clk)
	for i := 0; i < 2; i++ {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("burst request %d refused", i)
		}
	}
	ok, wait := l.allow("a")
	if ok || wait != 10*time.Second {
		t.Fatalf("third request: ok=%v wait=%v", ok, wait)
	}
	clk.t = clk.t.Add(4 * time.Second)
	if ok, wait := l.allow("a"); ok || wait != 6*time.Second {
		t.Fatalf("after 4 s: ok=%v wait=%v", ok, wait)
	}
	// A clock that moved backwards restores nothing.
	clk.t = clk.t.Add(-time.Hour)
	if ok, _ := l.allow("a"); ok {
		t.Fatal("backwards clock refilled the bucket")
	}
	clk.t = clk.t.Add(time.Hour + 6*time.Second)
	if ok, _ := l.allow("a"); !ok {
		t.Fatal("token not restored after 10 s")
	}
	// Refill never exceeds the burst.
	clk.t = clk.t.Add(time.Hour)
	for i := 0; i < 2; i++ {
		if ok, _ := l.allow("a"); !ok {
			t.Fatalf("request %d after an hour refused", i)
		}
	}
	if ok, _ := l.allow("a"); ok {
		t.Fatal("bucket held more than its burst")
	}
	// Bounded: at most 3 clients. "a" is throttled (its bucket is empty):
	// newcomers push out the other clients, never a, so a stays throttled.
	for i := 0; i < 10; i++ {
		l.allow(fmt.Sprintf("c%d", i))
		if l.size() > 3 {
			t.Fatalf("limiter tracks %d clients, max 3", l.size())
		}
	}
	if _, ok := l.items["a"]; !ok {
		t.Fatal("a throttled client was forgotten while others had tokens left")
	}
	if ok, _ := l.allow("a"); ok {
		t.Fatal("a throttled client got a fresh bucket after 10 other clients")
	}
}

// Issue 13.10: a client at its limit is not reset by a stream of new
// addresses; the least recently seen client with tokens left goes instead,
// and one whose bucket has refilled completely goes before it.
func TestLimiterEvictsUnthrottledFirst(t *testing.T) {
	clk := &stepClock{t: time.Unix(1789477777, 0)}
	l := newLimiter(RateLimit{Burst: 3, Every: 10 * time.Second}, 4, clk)
	spend := func(key string, n int) {
		for i := 0; i < n; i++ {
			l.allow(key)
		}
	}
	spend("throttled", 4) // 3 allowed, then refused
	spend("old", 1)       // 2 tokens left
	spend("recent", 1)
	spend("idle", 1)
	clk.t = clk.t.Add(15 * time.Second) // idle, old, recent: 3 tokens (refilled); throttled: 1.5
	spend("throttled", 1)               // 0.5 left: throttled again
	spend("recent", 2)                  // 1 left
	spend("old", 2)                     // 1 left, seen after recent
	// LRU order now, oldest first: idle, throttled, recent, old.
	l.allow("new1") // idle is refilled: it goes
	if _, ok := l.items["idle"]; ok {
		t.Fatal("the refilled client was not the one evicted")
	}
	l.allow("new2") // no refilled bucket: the least recently seen with a token, recent
	if _, ok := l.items["recent"]; ok {
		t.Fatalf("evicted the wrong client; left: %v", keys(l))
	}
	for i := 0; i < 1000; i++ {
		l.allow(fmt.Sprintf("flood%d", i))
	}
	if ok, wait := l.allow("throttled"); ok || wait <= 0 {
		t.Fatalf("throttled client reset by 1000 new addresses: ok=%v wait=%v", ok, wait)
	}
	if l.size() != 4 {
		t.Fatalf("%d clients tracked, max 4", l.size())
	}
}

// When every tracked client is throttled, a newcomer still gets a bucket:
// the client with the most tokens makes room.
func TestLimiterAllThrottled(t *testing.T) {
	clk := &stepClock{t: time.Unix(1789477777, 0)}
	l := newLimiter(RateLimit{Burst: 1, Every: time.Minute}, 2, clk)
	l.allow("a")
	l.allow("a")
	clk.t = clk.t.Add(30 * time.Second) // a: 0.5 tokens
	l.allow("b")
	l.allow("b") // b: 0 tokens
	if ok, _ := l.allow("c"); !ok {
		t.Fatal("a new client was refused")
	}
	if _, ok := l.items["b"]; !ok {
		t.Fatal("the emptier bucket was evicted instead of the fuller one")
	}
}

func keys(l *limiter) []string {
	var out []string
	for k := range l.items {
		out = append(out, k)
	}
	return out
}
