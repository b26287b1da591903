package probe

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"time"
)

// Verdict is the adjudication of one report (PROBE_PROTOCOL.md §7).
type Verdict string

// The four verdicts.
const (
	// ReadVerified: this session's sentinel for the current bucket, or for the
	// previous bucket within the skew allowance.
	ReadVerified Verdict = "READ_VERIFIED"
	// ReadStale: this session's sentinel from an older bucket inside the
	// stale horizon.
	ReadStale Verdict = "READ_STALE"
	// Hallucinated: the report matches nothing the verifier can recognise.
	Hallucinated Verdict = "HALLUCINATED"
	// ReplaySuspect: a genuine sentinel issued for another session, or this
	// session's sentinel reported again after it was already adjudicated.
	ReplaySuspect Verdict = "REPLAY_SUSPECT"
)

// Valid reports whether v is one of the four verdicts.
func (v Verdict) Valid() bool {
	switch v {
	case ReadVerified, ReadStale, Hallucinated, ReplaySuspect:
		return true
	}
	return false
}

// Defaults and limits of the verdict windows.
const (
	DefaultSkew         = 60 * time.Second
	DefaultStaleHorizon = 24 * time.Hour
	// MaxStaleHorizon bounds the work of adjudicating a miss: one MAC per
	// bucket of the horizon (2016 buckets at 7 days).
	MaxStaleHorizon = 7 * 24 * time.Hour
)

// ErrOptions is wrapped by every invalid option or record error.
var ErrOptions = errors.New("invalid probe options")

// Window sets the verdict windows. The zero value means the defaults.
type Window struct {
	// Skew is how long into a new bucket the previous bucket's sentinel still
	// counts as READ_VERIFIED, in whole seconds. 0 means DefaultSkew (60 s);
	// a negative value means no allowance. Must be below 300 s.
	Skew time.Duration
	// StaleHorizon is how far back READ_STALE reaches, in whole buckets
	// (rounded down). 0 means DefaultStaleHorizon (24 h = 288 buckets).
	// Must be 300 s to MaxStaleHorizon.
	StaleHorizon time.Duration
}

// window is a resolved Window in the units the rules use.
type window struct {
	skew    int64 // seconds
	horizon int64 // buckets
}

func (w Window) resolve() (window, error) {
	var r window
	switch {
	case w.Skew == 0:
		r.skew = int64(DefaultSkew / time.Second)
	case w.Skew < 0:
		r.skew = 0
	case w.Skew >= BucketSeconds*time.Second:
		return r, fmt.Errorf("%w: skew %v must be below one bucket (5m0s)", ErrOptions, w.Skew)
	default:
		r.skew = int64(w.Skew / time.Second)
	}
	h := w.StaleHorizon
	if h == 0 {
		h = DefaultStaleHorizon
	}
	if h < BucketSeconds*time.Second || h > MaxStaleHorizon {
		return r, fmt.Errorf("%w: stale horizon %v must be between 5m0s and %v", ErrOptions, h, MaxStaleHorizon)
	}
	r.horizon = int64(h / (BucketSeconds * time.Second))
	return r, nil
}

// inWindow reports whether a sentinel of bucket b can be recognised at
// current bucket c at all: c-horizon <= b <= c.
func (w window) inWindow(b, c int64) bool { return b <= c && c-b <= w.horizon }

// Result is the outcome of adjudicating one report. It never contains the
// reported value or a sentinel.
type Result struct {
	Verdict Verdict `json:"verdict"`
	// Session is the session the report was made for.
	Session string `json:"session_id"`
	// Matched is true when the report is this session's own sentinel;
	// Bucket and AgeSeconds are set only then.
	Matched bool  `json:"matched"`
	Bucket  int64 `json:"bucket"`
	// AgeSeconds is the time from the start of Bucket to the adjudication.
	AgeSeconds int64 `json:"age_seconds"`
	// Reason says in one line why; it never names another session.
	Reason string `json:"reason"`
}

// Reasons shared by the online and offline paths.
const (
	reasonMalformed    = "not a sentinel: want exactly %d characters of unpadded base64url"
	reasonNoMatch      = "matches no sentinel of this session within the stale horizon"
	reasonOther        = "a genuine sentinel that was issued for another session"
	reasonAgain        = "this sentinel was already adjudicated"
	reasonFuture       = "sentinel from a bucket after the verifier's current one: the verifier clock moved backwards"
	reasonExpired      = "sentinel older than the stale horizon of %d buckets"
	reasonBadSession   = "invalid session id"
	reasonBeforeEpoch  = "verifier clock is before 1970"
	reasonNotInAnswer  = "the answer contains no sentinel-shaped value"
	reasonAnswerNoHit  = "no sentinel-shaped value in the answer is this entry's sentinel"
	reasonAnswerOther  = "the answer quotes a genuine sentinel that was issued for another session"
	reasonAnswerAgain  = "this entry's sentinel was already adjudicated"
	reasonVerifiedCur  = "sentinel of the current bucket"
	reasonVerifiedSkew = "sentinel of the previous bucket, reported %d s into the current one (skew allowance %d s)"
	reasonStale        = "sentinel from %d buckets ago, within the stale horizon of %d buckets"
)

// judge applies the window rules to this session's own sentinel of bucket b
// at time now, for a sentinel that has not been adjudicated before.
func (w window) judge(r *Result, b int64, now time.Time) {
	c := Bucket(now)
	sec := now.Unix()
	r.Matched, r.Bucket, r.AgeSeconds = true, b, sec-b*BucketSeconds
	switch {
	case b > c:
		r.Verdict, r.Reason = Hallucinated, reasonFuture
	case c-b > w.horizon:
		r.Verdict, r.Reason = Hallucinated, fmt.Sprintf(reasonExpired, w.horizon)
	case b == c:
		r.Verdict, r.Reason = ReadVerified, reasonVerifiedCur
	case b == c-1 && sec-c*BucketSeconds < w.skew:
		r.Verdict, r.Reason = ReadVerified, fmt.Sprintf(reasonVerifiedSkew, sec-c*BucketSeconds, w.skew)
	default:
		r.Verdict, r.Reason = ReadStale, fmt.Sprintf(reasonStale, c-b, w.horizon)
	}
}

// Issued records one offline issuance: enough to recompute the sentinel
// with the key, nothing that reveals it. Store it beside the probed entry.
type Issued struct {
	Session string `json:"session"`
	Bucket  int64  `json:"bucket"`
	Length  int    `json:"length"`
}

func (iss Issued) validate() error {
	if err := ValidateSession(iss.Session); err != nil {
		return fmt.Errorf("%w: issuance record: %w", ErrOptions, err)
	}
	if iss.Bucket < 0 {
		return fmt.Errorf("%w: issuance record for %q: %w: %d", ErrOptions, iss.Session, ErrBucket, iss.Bucket)
	}
	if err := checkLength(iss.Length); err != nil {
		return fmt.Errorf("%w: issuance record for %q: %w", ErrOptions, iss.Session, err)
	}
	return nil
}

// Issue mints the sentinel of session for the bucket of now, without any
// state: the offline path (run mount --probe). Store the returned Issued;
// deliver the sentinel and then forget it. length 0 means DefaultLength.
func (k Keys) Issue(session string, now time.Time, length int) (Issued, string, error) {
	if length == 0 {
		length = DefaultLength
	}
	iss := Issued{Session: session, Bucket: Bucket(now), Length: length}
	s, err := k.Sentinel(iss.Session, iss.Bucket, iss.Length)
	if err != nil {
		return Issued{}, "", err
	}
	return iss, s, nil
}

// SentinelFor recomputes the sentinel of a stored issuance.
func (k Keys) SentinelFor(iss Issued) (string, error) {
	return k.Sentinel(iss.Session, iss.Bucket, iss.Length)
}

// Deliver returns content with the probe line of iss appended, exactly as
// AppendProbeLine does. Recomputing it at check time and hashing it lets a
// checker confirm a recorded delivered-bytes hash.
func (k Keys) Deliver(content []byte, iss Issued) ([]byte, error) {
	s, err := k.SentinelFor(iss)
	if err != nil {
		return nil, err
	}
	return AppendProbeLine(content, s), nil
}

// CheckOptions are the record-derived inputs of the stateless Check.
type CheckOptions struct {
	Window
	// Adjudicated is true when the record says this issuance already
	// received a verdict; a matching report is then REPLAY_SUSPECT.
	Adjudicated bool
	// Others are issuances for other sessions (for example the probed
	// entries of other runs). A report equal to one of their sentinels is
	// REPLAY_SUSPECT. Entries for iss.Session itself are ignored.
	Others []Issued
}

// Check adjudicates one reported value against one recorded issuance at
// time now, with the same rules and precedence as Adjudicator.Adjudicate
// (PROBE_PROTOCOL.md §7). The error is only for an invalid record or options;
// everything about the report itself is a verdict.
func (k Keys) Check(iss Issued, reported string, now time.Time, opts CheckOptions) (Result, error) {
	w, err := opts.Window.resolve()
	if err != nil {
		return Result{}, err
	}
	if err := iss.validate(); err != nil {
		return Result{}, err
	}
	for _, o := range opts.Others {
		if err := o.validate(); err != nil {
			return Result{}, err
		}
	}
	if !k.ok {
		return Result{}, fmt.Errorf("%w: probe keys not initialised", ErrOptions)
	}
	r := Result{Session: iss.Session}
	raw, ok := decodeSentinel(reported, iss.Length)
	if !ok {
		r.Verdict, r.Reason = Hallucinated, fmt.Sprintf(reasonMalformed, EncodedLength(iss.Length))
		return r, nil
	}
	m := k.newMacer()
	if hmac.Equal(m.mac(iss.Session, iss.Bucket)[:iss.Length], raw) {
		c := Bucket(now)
		if opts.Adjudicated && w.inWindow(iss.Bucket, c) {
			r.Matched, r.Bucket, r.AgeSeconds = true, iss.Bucket, now.Unix()-iss.Bucket*BucketSeconds
			r.Verdict, r.Reason = ReplaySuspect, reasonAgain
			return r, nil
		}
		w.judge(&r, iss.Bucket, now)
		return r, nil
	}
	if k.matchesOther(m, iss.Session, raw, opts.Others, w, Bucket(now)) {
		r.Verdict, r.Reason = ReplaySuspect, reasonOther
		return r, nil
	}
	r.Verdict, r.Reason = Hallucinated, reasonNoMatch
	return r, nil
}

// matchesOther reports whether raw is the sentinel of one of others (other
// sessions only) whose bucket is inside the window at current bucket c.
func (k Keys) matchesOther(m *macer, session string, raw []byte, others []Issued, w window, c int64) bool {
	found := false
	for _, o := range others {
		if o.Session == session || o.Length != len(raw) || !w.inWindow(o.Bucket, c) {
			continue
		}
		if hmac.Equal(m.mac(o.Session, o.Bucket)[:o.Length], raw) {
			found = true // keep going: the loop's time should not depend on where the hit is
		}
	}
	return found
}

// AnswerOptions are the record-derived inputs of CheckAnswer.
type AnswerOptions struct {
	Window
	// Adjudicated[i] is true when entries[i] already received a verdict.
	// nil means none did.
	Adjudicated []bool
	// Others are issuances outside this answer's entries; see CheckOptions.
	Others []Issued
}

// CheckAnswer finds sentinel-shaped values in a free-text answer and gives
// one Result per entry, in order (PROBE_PROTOCOL.md §10.4):
//   - an entry whose own sentinel appears is judged as Check judges it;
//   - otherwise, if a value that is no entry's sentinel is a genuine
//     sentinel of one of opts.Others, the entry is REPLAY_SUSPECT;
//   - otherwise the entry is HALLUCINATED.
func (k Keys) CheckAnswer(entries []Issued, answer string, now time.Time, opts AnswerOptions) ([]Result, error) {
	w, err := opts.Window.resolve()
	if err != nil {
		return nil, err
	}
	if opts.Adjudicated != nil && len(opts.Adjudicated) != len(entries) {
		return nil, fmt.Errorf("%w: %d adjudicated flags for %d entries", ErrOptions, len(opts.Adjudicated), len(entries))
	}
	for _, e := range entries {
		if err := e.validate(); err != nil {
			return nil, err
		}
	}
	for _, o := range opts.Others {
		if err := o.validate(); err != nil {
			return nil, err
		}
	}
	if !k.ok {
		return nil, fmt.Errorf("%w: probe keys not initialised", ErrOptions)
	}
	cands := FindSentinels(answer)
	m := k.newMacer()
	// Decode each candidate once and note which entry (if any) claims it.
	type cand struct {
		raw     []byte
		claimed bool
	}
	cs := make([]cand, 0, len(cands))
	for _, s := range cands {
		raw, err := encoding.DecodeString(s)
		if err != nil {
			continue // FindSentinels only returns decodable values
		}
		cs = append(cs, cand{raw: raw})
	}
	// Each entry's sentinel is looked up among the candidates, and each
	// other issuance's once: the answer and the number of probed entries are
	// both the agent's, so the work is their sum, not their product. (The
	// lookup is keyed by candidate bytes; its timing depends on the map's
	// per-process hash of the sentinel, which tells nobody anything.)
	byRaw := make(map[string]int, len(cs))
	for j := range cs {
		byRaw[string(cs[j].raw)] = j // FindSentinels returns each value once
	}
	own := make([]bool, len(entries)) // entries[i]'s sentinel is in the answer
	for i, e := range entries {
		if j, ok := byRaw[string(m.mac(e.Session, e.Bucket)[:e.Length])]; ok {
			own[i], cs[j].claimed = true, true
		}
	}
	c := Bucket(now)
	// the sessions of opts.Others whose sentinel, inside the window, is a
	// candidate that no entry claims
	var otherHits map[string]bool
	for _, o := range opts.Others {
		if !w.inWindow(o.Bucket, c) {
			continue
		}
		if j, ok := byRaw[string(m.mac(o.Session, o.Bucket)[:o.Length])]; ok && !cs[j].claimed {
			if otherHits == nil {
				otherHits = make(map[string]bool)
			}
			otherHits[o.Session] = true
		}
	}
	out := make([]Result, len(entries))
	for i, e := range entries {
		r := Result{Session: e.Session}
		switch {
		case own[i]:
			if opts.Adjudicated != nil && opts.Adjudicated[i] && w.inWindow(e.Bucket, c) {
				r.Matched, r.Bucket, r.AgeSeconds = true, e.Bucket, now.Unix()-e.Bucket*BucketSeconds
				r.Verdict, r.Reason = ReplaySuspect, reasonAnswerAgain
			} else {
				w.judge(&r, e.Bucket, now)
			}
		default:
			r.Verdict, r.Reason = Hallucinated, reasonNotInAnswer
			if len(cs) > 0 {
				r.Reason = reasonAnswerNoHit
			}
			// another session's genuine sentinel (an issuance of this
			// entry's own session among Others does not count)
			if len(otherHits) > 1 || len(otherHits) == 1 && !otherHits[e.Session] {
				r.Verdict, r.Reason = ReplaySuspect, reasonAnswerOther
			}
		}
		out[i] = r
	}
	return out, nil
}
