package adapters

import (
	"context"
	"errors"
	"sort"
	"strings"
)

// Openers in this package never fail on a bad Spec: they return a source
// that reports the problem from Fetch, as an *Error naming the resource like
// every other failure. Check reports the same problem up front.

// brokenSource is a Spec that cannot be fetched.
type brokenSource struct{ err *Error }

func broken(err *Error) (Source, error) { return brokenSource{err: err}, nil }

func (b brokenSource) Fetch(_ context.Context, req Request) (Result, error) {
	e := *b.err
	e.URI = req.URI
	return Result{}, &e
}

// Check reports what is wrong with spec under env without fetching
// anything: a missing or malformed field, a URL scheme other than http(s), a
// ${NAME} that env does not allow. It returns nil for a Spec whose problems,
// if any, can only show at fetch time (an unset variable, an unreachable
// host, a missing file).
func Check(spec Spec, env Env) error {
	src, err := Open(spec, env)
	if err != nil {
		return err
	}
	if b, ok := src.(brokenSource); ok {
		return b.err
	}
	return nil
}

// scrubber removes secret values (expanded from the environment) from what
// a fetch returns, in case a server echoes them back in a header or a status
// line.
type scrubber []string

func newScrubber(values []string) scrubber {
	var s scrubber
	for _, v := range values {
		if len(v) >= 3 {
			s = append(s, v)
		}
	}
	// Longest first, so a secret containing another is hidden whole.
	sort.Slice(s, func(i, j int) bool { return len(s[i]) > len(s[j]) })
	return s
}

func (s scrubber) str(v string) string {
	for _, secret := range s {
		v = strings.ReplaceAll(v, secret, Redacted)
	}
	return v
}

func (s scrubber) result(r *Result) {
	if len(s) == 0 {
		return
	}
	r.ContentType = s.str(r.ContentType)
	r.Revision = s.str(r.Revision)
	r.ETag = s.str(r.ETag)
	r.LastModified = s.str(r.LastModified)
	for k, v := range r.Provenance {
		r.Provenance[k] = s.str(v)
	}
}

// kinds a scrubbed error keeps matching.
var keptKinds = []error{ErrNotFound, ErrTooLarge, ErrRefused, ErrConfig, context.Canceled, context.DeadlineExceeded}

// err returns err unchanged unless its message holds a secret; then it
// returns an *Error with the secret hidden that still matches the same
// sentinels, and drops the original chain, which would print the secret.
func (s scrubber) err(err error) error {
	if err == nil || len(s) == 0 {
		return err
	}
	msg := err.Error()
	clean := s.str(msg)
	if clean == msg {
		return err
	}
	out := &Error{}
	var ae *Error
	if errors.As(err, &ae) {
		out.URI, out.Rule = ae.URI, ae.Rule
		clean = s.str(ae.Err.Error())
	}
	k := &kindError{msg: clean}
	var kinds []error
	for _, kind := range keptKinds {
		if errors.Is(err, kind) {
			kinds = append(kinds, kind)
		}
	}
	k.kind = errors.Join(kinds...)
	out.Err = k
	return out
}
