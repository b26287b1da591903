package probe

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"
)

// Clock tells the time. Everything time-dependent in this package reads a
// Clock, so tests move time instead of sleeping.
type Clock interface{ Now() time.Time }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// SystemClock is the real clock.
var SystemClock Clock = systemClock{}

// DefaultLogLimit is the default number of entries of the issuance log.
const DefaultLogLimit = 1 << 16

// Options configure an Adjudicator. The zero value means the defaults.
type Options struct {
	// Clock defaults to SystemClock.
	Clock Clock
	// Length is the sentinel length in bytes, 16 to 32; 0 means 16.
	Length int
	// Window holds Skew and StaleHorizon.
	Window
	// LogLimit bounds the issuance log; 0 means DefaultLogLimit. When full,
	// the oldest entry is dropped.
	LogLimit int
}

// Adjudicator issues sentinels and adjudicates reports, keeping a bounded
// in-memory issuance log for replay detection. It is safe for concurrent use.
//
// The log holds, per issued or adjudicated sentinel, a SHA-256 fingerprint
// of the sentinel bytes (never the sentinel), its session, its bucket and
// whether it was adjudicated. Entries leave the log when their bucket falls
// out of the stale horizon or when the log is full. Losing an entry only
// degrades REPLAY_SUSPECT: a second report then gets the verdict of a first
// one, and another session's sentinel reads as HALLUCINATED.
type Adjudicator struct {
	keys   Keys
	clock  Clock
	length int
	w      window
	limit  int

	pool sync.Pool // *macer

	mu    sync.Mutex
	log   map[[sha256.Size]byte]*logEntry
	order [][sha256.Size]byte // insertion order, oldest at head
	head  int
}

type logEntry struct {
	session     string
	bucket      int64
	adjudicated bool
}

// NewAdjudicator returns an Adjudicator for keys. It fails on invalid keys
// or options.
func NewAdjudicator(keys Keys, opts Options) (*Adjudicator, error) {
	if !keys.ok {
		return nil, fmt.Errorf("%w: probe keys not initialised: build them with DeriveKeys or NewRandomKeys", ErrOptions)
	}
	a := &Adjudicator{keys: keys, clock: opts.Clock, length: opts.Length, limit: opts.LogLimit}
	if a.clock == nil {
		a.clock = SystemClock
	}
	if a.length == 0 {
		a.length = DefaultLength
	}
	if err := checkLength(a.length); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	if a.limit == 0 {
		a.limit = DefaultLogLimit
	}
	if a.limit < 0 {
		return nil, fmt.Errorf("%w: log limit %d is negative", ErrOptions, a.limit)
	}
	w, err := opts.Window.resolve()
	if err != nil {
		return nil, err
	}
	a.w = w
	a.log = make(map[[sha256.Size]byte]*logEntry)
	a.pool.New = func() any { return a.keys.newMacer() }
	return a, nil
}

// Length returns the sentinel length in bytes.
func (a *Adjudicator) Length() int { return a.length }

// Issue returns the sentinel of session for the current bucket and records
// the issuance in the log. Issuing twice in one bucket returns the same
// sentinel and keeps one log entry.
func (a *Adjudicator) Issue(session string) (sentinel string, bucket int64, err error) {
	if err := ValidateSession(session); err != nil {
		return "", 0, err
	}
	now := a.clock.Now()
	b := Bucket(now)
	if b < 0 {
		return "", 0, fmt.Errorf("%w: clock reads %s; check the system clock", ErrBucket, now.UTC().Format(time.RFC3339))
	}
	m := a.pool.Get().(*macer)
	raw := m.mac(session, b)[:a.length]
	sentinel = encoding.EncodeToString(raw)
	fp := sha256.Sum256(raw)
	a.pool.Put(m)

	a.mu.Lock()
	defer a.mu.Unlock()
	a.prune(b)
	if _, ok := a.log[fp]; !ok {
		a.insert(fp, &logEntry{session: session, bucket: b})
	}
	return sentinel, b, nil
}

// Adjudicate judges one report of reported for session at the clock's
// current time (PROBE_PROTOCOL.md §7), in this order of precedence:
//  1. an invalid session id or a value that is not exactly the encoding of
//     Length bytes: HALLUCINATED;
//  2. this session's sentinel for a bucket in [current-horizon, current]:
//     REPLAY_SUSPECT if the log says it was adjudicated, otherwise
//     READ_VERIFIED or READ_STALE by the windows, and the log marks it;
//  3. a sentinel the log holds for another session, bucket in the same
//     range: REPLAY_SUSPECT;
//  4. anything else: HALLUCINATED.
//
// Buckets after the current one are never searched, so a clock that moved
// backwards across a boundary makes the later sentinels HALLUCINATED until
// it catches up.
func (a *Adjudicator) Adjudicate(session, reported string) Result {
	r := Result{Session: session}
	if ValidateSession(session) != nil {
		r.Verdict, r.Reason = Hallucinated, reasonBadSession
		return r
	}
	raw, ok := decodeSentinel(reported, a.length)
	if !ok {
		r.Verdict, r.Reason = Hallucinated, fmt.Sprintf(reasonMalformed, EncodedLength(a.length))
		return r
	}
	now := a.clock.Now()
	c := Bucket(now)
	if c < 0 {
		r.Verdict, r.Reason = Hallucinated, reasonBeforeEpoch
		return r
	}
	m := a.pool.Get().(*macer)
	defer a.pool.Put(m)
	matched, mb := false, int64(0)
	lo := max(c-a.w.horizon, 0)
	for b := c; b >= lo; b-- {
		if hmac.Equal(m.mac(session, b)[:a.length], raw) {
			matched, mb = true, b
			break
		}
	}
	fp := sha256.Sum256(raw)

	a.mu.Lock()
	a.prune(c)
	e := a.log[fp]
	if matched {
		again := e != nil && e.adjudicated
		if e == nil {
			a.insert(fp, &logEntry{session: session, bucket: mb, adjudicated: true})
		} else {
			e.adjudicated = true
		}
		a.mu.Unlock()
		if again {
			r.Matched, r.Bucket, r.AgeSeconds = true, mb, now.Unix()-mb*BucketSeconds
			r.Verdict, r.Reason = ReplaySuspect, reasonAgain
			return r
		}
		a.w.judge(&r, mb, now)
		return r
	}
	var other logEntry
	if e != nil {
		other = *e
	}
	a.mu.Unlock()

	r.Verdict, r.Reason = Hallucinated, reasonNoMatch
	switch {
	case e == nil:
	case other.session != session && a.w.inWindow(other.bucket, c):
		// Confirm by recomputation: the log proposes, the MAC decides.
		if hmac.Equal(m.mac(other.session, other.bucket)[:a.length], raw) {
			r.Verdict, r.Reason = ReplaySuspect, reasonOther
		}
	case other.session == session && other.bucket > c:
		r.Reason = reasonFuture
	}
	return r
}

// LogLen returns the number of entries in the issuance log.
func (a *Adjudicator) LogLen() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.log)
}

// insert appends an entry, dropping the oldest when the log is full.
// Callers hold a.mu.
func (a *Adjudicator) insert(fp [sha256.Size]byte, e *logEntry) {
	for len(a.log) >= a.limit && a.head < len(a.order) {
		delete(a.log, a.order[a.head])
		a.head++
	}
	a.log[fp] = e
	a.order = append(a.order, fp)
	a.compact()
}

// prune drops entries from the head whose bucket left the stale horizon at
// current bucket c. Entries behind a younger head wait for it; lookups
// check the window anyway. Callers hold a.mu.
func (a *Adjudicator) prune(c int64) {
	for a.head < len(a.order) {
		e, ok := a.log[a.order[a.head]]
		if ok && c-e.bucket <= a.w.horizon {
			break
		}
		delete(a.log, a.order[a.head])
		a.head++
	}
	a.compact()
}

func (a *Adjudicator) compact() {
	if a.head > 0 && a.head >= len(a.order)/2 {
		n := copy(a.order, a.order[a.head:])
		clear(a.order[n:])
		a.order = a.order[:n]
		a.head = 0
	}
}
