package adapters

import (
	"bytes"
	"context"
	"errors"
	"net/url"
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

// url returns u, a URL about to be recorded (an http source's final_url),
// with everything after its host replaced by Redacted when a secret
// appears in it percent-decoded once or more: a server that puts the token
// its request carried in a redirect (a '+' of it written %2B, every byte
// escaped, or the escaped value escaped again, as a URL nested in a query
// is) would get it past str. Each decoding is compared with '+' and ' '
// taken as one character, in the URL and in the secret, so a space that
// one layer wrote '+' matches whatever layers follow. A URL still
// decoding after maxDecodeRounds is hidden too. str still hides a secret
// written plainly.
func (s scrubber) url(u string) string {
	if len(s) == 0 {
		return u
	}
	if s.inDecoded(u) {
		if p, err := url.Parse(u); err == nil && p.Host != "" {
			return p.Scheme + "://" + p.Host + "/" + Redacted
		}
		return Redacted
	}
	return u
}

// maxDecodeRounds bounds how many times url percent-decodes a URL: each
// round of a URL that still changes shortens it, and no URL a server
// means is escaped this deep.
const maxDecodeRounds = 8

// inDecoded reports whether a secret appears in u or in one of its
// repeated percent-decodings ('+' and ' ' as one), or u decodes further
// than maxDecodeRounds.
func (s scrubber) inDecoded(u string) bool {
	plusSpace := strings.NewReplacer(" ", "+")
	secrets := make([]string, len(s))
	for i, v := range s {
		secrets[i] = plusSpace.Replace(v)
	}
	cur := u
	for round := 0; ; round++ {
		canon := plusSpace.Replace(cur)
		for _, v := range secrets {
			if strings.Contains(canon, v) {
				return true
			}
		}
		next := percentDecode(cur, false)
		if next == cur {
			return false
		}
		if round == maxDecodeRounds {
			return true
		}
		cur = next
	}
}

// text is str, and then url for each word of v that holds a URL (a
// redirect named in a message: the loop, the last hop followed).
func (s scrubber) text(v string) string {
	v = s.str(v)
	if !strings.Contains(v, "://") {
		return v
	}
	words := strings.Split(v, " ")
	for i, w := range words {
		if strings.Contains(w, "://") {
			u := strings.TrimRight(w, ");,")
			words[i] = s.url(u) + w[len(u):]
		}
	}
	return strings.Join(words, " ")
}

// percentDecode decodes every %XX of s (and, with plus, '+' as a space),
// leaving a '%' that starts no escape as it is: url's unescaping fails on
// the whole string at the first bad escape, which a query may hold.
func percentDecode(s string, plus bool) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		case c == '+' && plus:
			b = append(b, ' ')
		default:
			b = append(b, c)
		}
	}
	return string(b)
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
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

// minSecretInDocument is the shortest expanded value secretIn looks for in
// a document: a shorter one (no credential is that short) would refuse
// documents that hold the same few characters by chance.
const minSecretInDocument = 8

// secretIn returns the variable (names[i]) whose value (secrets[i]) content
// holds, or "". A document is stored, shared with the store and printed
// whole, and cannot be scrubbed (its hash is its identity): one that holds
// a secret its request sent (a server that echoes its request headers, an
// answer that quotes the token) is refused instead.
func secretIn(content []byte, secrets, names []string) string {
	for i, v := range secrets {
		if len(v) >= minSecretInDocument && i < len(names) && bytes.Contains(content, []byte(v)) {
			return names[i]
		}
	}
	return ""
}

// refuseSecretInDocument is the refusal of a document that holds the value
// of the variable name; what names the source.
func refuseSecretInDocument(uri, what, name string) *Error {
	return refuse(uri, RuleSecretInDocument, "%s answered with a document that holds the value of %s, which the request sent; readproof records no secret: "+
		"check what the server returns (a page that echoes its request headers, an answer that quotes the token) and point the source at the document itself", what, name)
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
	clean := s.text(msg)
	if clean == msg {
		return err
	}
	out := &Error{}
	var ae *Error
	if errors.As(err, &ae) {
		out.URI, out.Rule = ae.URI, ae.Rule
		clean = s.text(ae.Err.Error())
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
