package mcpserver

// The bound on requests refused for their token, per remote address: a
// request without a token, or with one the server did not issue (or has
// revoked, or that expired), is answered 401 by the token check, which
// stats the token file and hashes what was presented. Without a bound a
// client with no token made the server do that, and write a 401, as fast
// as it could send; now each address has a small budget of refusals
// (a token bucket), and past it the address's requests are answered 429
// with Retry-After: unchecked when they carry no token, after the check
// when they do, so that a valid token is never refused by the budget of
// an address it shares (127.0.0.1) with a client that spent it.

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/readproof/readproof/internal/mcpauth"
)

// Defaults of the refusal budget (HTTPOptions.UntrustedRate and
// UntrustedBurst) and of the number of addresses it remembers.
const (
	DefaultUntrustedRate    = 2  // refused requests per second per address, sustained
	DefaultUntrustedBurst   = 20 // refused requests per address at once
	DefaultUntrustedEntries = 4096
)

// untrustedLimiter keeps one token bucket of refusals per remote address
// (an IPv6 address by its /64, which one host commonly holds whole), for
// at most max addresses: past that the one used least recently is
// forgotten (a list in the order of use and a map into it, so memory is
// bounded whatever the number of addresses that send).
//
// Every request takes one refusal from its address's bucket before its
// token is checked, and gives it back once the token is accepted (or when
// its answer is not a 401: the token file unusable, a panic): so however
// many requests of one address arrive at once, no more than the bucket
// holds are checked and refused (before the re-read of session 29 a
// refusal was taken only when its 401 was written, and requests sent at
// once were all checked, TestUntrustedChargedBeforeCheck). A request with
// a valid token takes nothing for longer than its check, and is never
// refused: past the budget a request that presents a token shaped as the
// ones we issue is still checked (a stat and a hash), and only a refused
// one answered 429. A string of any other shape cannot be valid: it is
// refused as no token is, without a check, before the budget (401) and
// past it (429), so a flood of junk tokens costs neither a stat nor a hash
// (before session 30 each was checked, TestUntrustedJunkTokensUnchecked).
// Forgetting an address gives it a full bucket again, so many addresses
// that each stay within their budget are not refused; each of them still
// costs only its budget.
type untrustedLimiter struct {
	rate  float64
	burst float64
	max   int

	mu     sync.Mutex
	order  *list.List // of *untrustedEntry, most recently used first
	byAddr map[netip.Prefix]*list.Element
}

// untrustedEntry is an address's bucket: tokens refusals left at last.
type untrustedEntry struct {
	addr   netip.Prefix
	tokens float64
	last   time.Time
}

// fill adds what the bucket has earned since last, up to burst.
func (l *untrustedLimiter) fill(e *untrustedEntry, now time.Time) {
	if now.After(e.last) {
		e.tokens = min(l.burst, e.tokens+now.Sub(e.last).Seconds()*l.rate)
		e.last = now
	}
}

func newUntrustedLimiter(r float64, burst, max int) *untrustedLimiter {
	return &untrustedLimiter{rate: r, burst: float64(burst), max: max, order: list.New(), byAddr: map[netip.Prefix]*list.Element{}}
}

// addrKey is the key of a request's remote address: the IPv4 address, or
// the /64 of an IPv6 one; ok is false when the address does not parse (a
// listener that is not TCP), and the request is then not bounded here.
func addrKey(remote string) (netip.Prefix, bool) {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Prefix{}, false
	}
	a = a.Unmap().WithZone("")
	bits := 32
	if a.Is6() {
		bits = 64
	}
	p, err := a.Prefix(bits)
	return p, err == nil
}

// wait says how long until addr may be refused again: 0 when its bucket
// holds a refusal (or it has none yet). It takes nothing.
func (l *untrustedLimiter) wait(addr netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.byAddr[addr]
	if el == nil {
		return 0
	}
	l.order.MoveToFront(el)
	e := el.Value.(*untrustedEntry)
	l.fill(e, now)
	return l.waitFor(e)
}

func (l *untrustedLimiter) waitFor(e *untrustedEntry) time.Duration {
	if e.tokens >= 1 {
		return 0
	}
	return time.Duration((1 - e.tokens) / l.rate * float64(time.Second))
}

// take takes one refusal from addr's bucket, making it (and forgetting
// the address used least recently, at the bound) when addr has none, and
// returns 0; when the bucket is empty it takes nothing and says how long
// until it holds one.
func (l *untrustedLimiter) take(addr netip.Prefix, now time.Time) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.byAddr[addr]
	if el == nil {
		if l.order.Len() >= l.max {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.byAddr, old.Value.(*untrustedEntry).addr)
		}
		el = l.order.PushFront(&untrustedEntry{addr: addr, tokens: l.burst, last: now})
		l.byAddr[addr] = el
	} else {
		l.order.MoveToFront(el)
	}
	e := el.Value.(*untrustedEntry)
	l.fill(e, now)
	if d := l.waitFor(e); d > 0 {
		return d
	}
	e.tokens--
	return 0
}

// charge takes one refusal from addr's bucket, if it holds one (take).
func (l *untrustedLimiter) charge(addr netip.Prefix, now time.Time) { l.take(addr, now) }

// give gives back a refusal take took from addr's bucket (none when the
// address has been forgotten since: its bucket is full again).
func (l *untrustedLimiter) give(addr netip.Prefix, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if el := l.byAddr[addr]; el != nil {
		e := el.Value.(*untrustedEntry)
		l.fill(e, now)
		e.tokens = min(l.burst, e.tokens+1)
	}
}

// remembered is the number of addresses the limiter holds.
func (l *untrustedLimiter) remembered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// wrap bounds the refusals of next (the token check) per remote address.
// A request takes one refusal before its token is checked, and gives it
// back when the token is accepted (accepted, placed after the check) or
// when its answer is not a 401, whichever comes first, on every path (a
// panic, a client gone, a timeout). When its address's bucket is empty, a
// request without a token, or with a string not shaped as one, is
// answered 429 with Retry-After unchecked, while one that presents a
// well-shaped token still has it checked: a valid token
// goes on (taking nothing), a refused one is answered 429 with
// Retry-After instead of its 401. So a valid token is never refused here,
// whoever else sends from its address (before the re-read of session 29,
// any local process without a token, on loopback, had every agent's
// requests answered 429, TestUntrustedLoopbackShared).
func (l *untrustedLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, ok := addrKey(r.RemoteAddr)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if d := l.take(addr, time.Now()); d > 0 {
			if !presentsWellShapedToken(r) {
				tooManyRefused(w, d)
				return
			}
			// nothing taken, nothing to give back
			next.ServeHTTP(&refusalWriter{ResponseWriter: w, l: l, addr: addr, released: true, over: d}, r)
			return
		}
		rw := &refusalWriter{ResponseWriter: w, l: l, addr: addr}
		defer func() {
			if !rw.refused {
				rw.release()
			}
		}()
		next.ServeHTTP(rw, r)
	})
}

// presentsWellShapedToken says whether r carries a bearer token the token
// check would look up (as the SDK's middleware reads the header): one
// shaped as the tokens we issue (mcpauth.ParseToken). Any other string
// cannot be valid, and is refused as no token is, unchecked.
func presentsWellShapedToken(r *http.Request) bool {
	f := strings.Fields(r.Header.Get("Authorization"))
	return len(f) == 2 && strings.EqualFold(f[0], "bearer") && mcpauth.ParseToken(f[1]) == nil
}

// tooManyRefused answers 429 for an address whose budget of refusals is
// spent, d being how long until it holds one again.
func tooManyRefused(w http.ResponseWriter, d time.Duration) {
	// (the connection closes with the answer: challengeWriter)
	w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)+1))
	http.Error(w, "too many requests refused for their token from this address: slow down, and check the token (readproof mcp token list shows which are live)", http.StatusTooManyRequests)
}

// accepted gives back the refusal its request took (wrap) once its token
// is accepted: next is what runs after the token check. The request's
// writer is wrap's, or wraps it (Unwrap).
func (l *untrustedLimiter) accepted(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for u := w; u != nil; {
			if rw, ok := u.(*refusalWriter); ok && rw.l == l {
				rw.release()
				break
			}
			inner, ok := u.(interface{ Unwrap() http.ResponseWriter })
			if !ok {
				break
			}
			u = inner.Unwrap()
		}
		next.ServeHTTP(w, r)
	})
}

// refusalWriter records whether the answer's status is 401, and holds
// the refusal its request took from addr's bucket until release gives it
// back (once; a request's handlers run on one goroutine). When over is
// not 0 the address's budget was spent (wrap): a 401 is answered 429 with
// Retry-After instead, the token check's words dropped.
type refusalWriter struct {
	http.ResponseWriter
	l        *untrustedLimiter
	addr     netip.Prefix
	over     time.Duration
	refused  bool
	done     bool
	released bool
	muted    bool // the 401's body, replaced by the 429's
}

func (w *refusalWriter) release() {
	if !w.released {
		w.released = true
		w.l.give(w.addr, time.Now())
	}
}

func (w *refusalWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		w.refused = code == http.StatusUnauthorized
		if w.refused && w.over > 0 {
			w.muted = true
			h := w.Header()
			h.Del("WWW-Authenticate")
			h.Del("Content-Length")
			tooManyRefused(w.ResponseWriter, w.over)
			return
		}
	}
	if !w.muted {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *refusalWriter) Write(p []byte) (int, error) {
	w.done = true
	if w.muted {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

func (w *refusalWriter) Flush() {
	w.done = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
