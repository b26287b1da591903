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
	// Bounded: at most 3 clients; the least recently seen goes first.
	for i := 0; i < 10; i++ {
		l.allow(fmt.Sprintf("c%d", i))
		if l.size() > 3 {
			t.Fatalf("limiter tracks %d clients, max 3", l.size())
		}
	}
	if _, ok := l.items["a"]; ok {
		t.Fatal("least recently seen client not evicted")
	}
}
