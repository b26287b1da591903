package probe

import (
	"container/list"
	"math"
	"sync"
	"time"
)

// RateLimit is a token bucket: a client may spend Burst requests at once and
// regains one every Every. The zero value means DefaultRateLimit.
type RateLimit struct {
	Burst int
	Every time.Duration
}

// DefaultRateLimit allows bursts of 20 requests and 30 a minute after that,
// per client and endpoint.
var DefaultRateLimit = RateLimit{Burst: 20, Every: 2 * time.Second}

func (r RateLimit) orDefault() RateLimit {
	if r.Burst == 0 && r.Every == 0 {
		return DefaultRateLimit
	}
	return r
}

// limiter holds one token bucket per key, at most max of them. Forgetting a
// key hands that client a full bucket again, so when the table is full it
// forgets, in this order: the least recently seen key whose bucket has
// refilled completely (nothing is lost), else the least recently seen key
// that is not throttled (it has a token left), else the key with the most
// tokens. A throttled client therefore stays throttled however many other
// clients arrive, unless every tracked client is throttled as well.
type limiter struct {
	rate  RateLimit
	max   int
	clock Clock

	mu    sync.Mutex
	items map[string]*list.Element
	lru   *list.List // front = most recently seen
}

type bucketState struct {
	key    string
	tokens float64
	last   time.Time
}

func newLimiter(rate RateLimit, max int, clock Clock) *limiter {
	return &limiter{rate: rate, max: max, clock: clock, items: make(map[string]*list.Element), lru: list.New()}
}

// allow spends one token of key. When none is left it returns false and how
// long until one is.
func (l *limiter) allow(key string) (bool, time.Duration) {
	now := l.clock.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	var st *bucketState
	if el, ok := l.items[key]; ok {
		l.lru.MoveToFront(el)
		st = el.Value.(*bucketState)
		if d := now.Sub(st.last); d > 0 {
			st.tokens = math.Min(float64(l.rate.Burst), st.tokens+float64(d)/float64(l.rate.Every))
			st.last = now
		}
		// A clock that moved backwards restores nothing and keeps last.
	} else {
		for l.lru.Len() >= l.max {
			l.evict(now)
		}
		st = &bucketState{key: key, tokens: float64(l.rate.Burst), last: now}
		l.items[key] = l.lru.PushFront(st)
	}
	if st.tokens >= 1 {
		st.tokens--
		return true, 0
	}
	return false, time.Duration((1 - st.tokens) * float64(l.rate.Every))
}

// tokensAt is the number of tokens st holds at now, without changing it.
func (l *limiter) tokensAt(st *bucketState, now time.Time) float64 {
	t := st.tokens
	if d := now.Sub(st.last); d > 0 {
		t = math.Min(float64(l.rate.Burst), t+float64(d)/float64(l.rate.Every))
	}
	return t
}

// evict forgets one key, chosen as the limiter's doc says. It scans from the
// least recently seen end and stops at the first refilled bucket; callers
// hold l.mu.
func (l *limiter) evict(now time.Time) {
	var open, most *list.Element
	mostTokens := -1.0
	for el := l.lru.Back(); el != nil; el = el.Prev() {
		t := l.tokensAt(el.Value.(*bucketState), now)
		if t >= float64(l.rate.Burst) {
			open = el
			break
		}
		if open == nil && t >= 1 {
			open = el
		}
		if t > mostTokens {
			most, mostTokens = el, t
		}
	}
	victim := open
	if victim == nil {
		victim = most
	}
	if victim == nil {
		return
	}
	delete(l.items, victim.Value.(*bucketState).key)
	l.lru.Remove(victim)
}

// size returns the number of tracked keys.
func (l *limiter) size() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lru.Len()
}
