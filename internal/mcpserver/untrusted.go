package mcpserver

// The bound on requests refused for their token, per remote address: a
// request without a token, or with one the server did not issue (or has
// revoked, or that expired), is answered 401 by the token check, which
// stats the token file and hashes what was presented. Without a bound a
// client with no token made the server do that, and write a 401, as fast
// as it could send; now each address has a small budget of refusals
// (a token bucket), and past it the address's requests are answered 429
// with Retry-After before any token is checked.

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"
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
// A request with a valid token never takes from a bucket, and is refused
// only when its own address's bucket is empty: another address's refusals
// never slow it. Forgetting an address gives it a full bucket again, so
// many addresses that each stay within their budget are not refused; each
// of them still costs only its budget.
type untrustedLimiter struct {
	rate  rate.Limit
	burst int
	max   int

	mu     sync.Mutex
	order  *list.List // of *untrustedEntry, most recently used first
	byAddr map[netip.Prefix]*list.Element
}

type untrustedEntry struct {
	addr netip.Prefix
	lim  *rate.Limiter
}

func newUntrustedLimiter(r float64, burst, max int) *untrustedLimiter {
	return &untrustedLimiter{rate: rate.Limit(r), burst: burst, max: max, order: list.New(), byAddr: map[netip.Prefix]*list.Element{}}
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
	lim := el.Value.(*untrustedEntry).lim
	tokens := lim.TokensAt(now)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / float64(l.rate) * float64(time.Second))
}

// charge takes one refusal from addr's bucket, making it (and forgetting
// the address used least recently, at the bound) when addr has none.
func (l *untrustedLimiter) charge(addr netip.Prefix, now time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	el := l.byAddr[addr]
	if el == nil {
		if l.order.Len() >= l.max {
			old := l.order.Back()
			l.order.Remove(old)
			delete(l.byAddr, old.Value.(*untrustedEntry).addr)
		}
		el = l.order.PushFront(&untrustedEntry{addr: addr, lim: rate.NewLimiter(l.rate, l.burst)})
		l.byAddr[addr] = el
	} else {
		l.order.MoveToFront(el)
	}
	el.Value.(*untrustedEntry).lim.AllowN(now, 1)
}

// remembered is the number of addresses the limiter holds.
func (l *untrustedLimiter) remembered() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.order.Len()
}

// wrap bounds the refusals of next (the token check) per remote address:
// an address whose bucket is empty is answered 429 with Retry-After, its
// token unchecked; a 401 that next answers takes one from the bucket.
func (l *untrustedLimiter) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		addr, ok := addrKey(r.RemoteAddr)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		if d := l.wait(addr, time.Now()); d > 0 {
			// (the connection closes with the answer: challengeWriter)
			w.Header().Set("Retry-After", strconv.Itoa(int(d/time.Second)+1))
			http.Error(w, "too many requests refused for their token from this address: slow down, and check the token (readproof mcp token list shows which are live)", http.StatusTooManyRequests)
			return
		}
		next.ServeHTTP(&refusalWriter{ResponseWriter: w, refused: func() { l.charge(addr, time.Now()) }}, r)
	})
}

// refusalWriter calls refused when a 401 is written.
type refusalWriter struct {
	http.ResponseWriter
	refused func()
	done    bool
}

func (w *refusalWriter) WriteHeader(code int) {
	if !w.done {
		w.done = true
		if code == http.StatusUnauthorized {
			w.refused()
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *refusalWriter) Write(p []byte) (int, error) {
	w.done = true
	return w.ResponseWriter.Write(p)
}

func (w *refusalWriter) Flush() {
	w.done = true
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *refusalWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
