package evidence

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Bundles leave the building, so resource definitions are redacted again here
// even though callers redact first: a value is replaced by "[REDACTED]" when
// its key names a credential or the value itself is shaped like one, and URLs
// lose their user information and credential-named query values.

var secretKey = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(authori[sz]ation|cookie|token|secret|passw(or)?d|passphrase|api[-_]?key|auth|session|signature|credential|private[-_]?key)`)
})

var secretValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(bearer|basic|token|digest)\s|^(ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|sk-|xox[abprs]-|AKIA|ASIA)`)
})

// redactor redacts resource definitions and provenance, matching each key
// against the credential pattern once (a bundle repeats the same few keys
// in every entry and resource).
type redactor struct {
	secret map[string]bool
}

func newRedactor() *redactor { return &redactor{secret: map[string]bool{}} }

// secretKey reports whether key names a credential.
func (r *redactor) secretKey(key string) bool {
	if v, ascii := secretKeyASCII(key); ascii {
		return v
	}
	v, ok := r.secret[key]
	if !ok {
		v = secretKey().MatchString(key)
		r.secret[key] = v
	}
	return v
}

// secretKeyASCII is the secretKey pattern's answer for a key of ASCII
// characters (ascii true), where its case folding is ASCII's; for any other
// key ascii is false and the pattern decides (it folds K with the Kelvin
// sign, s with the long s). A bundle repeats the same few keys in every
// entry: this spares the store check a regular expression per entry
// (FuzzSecretKeyASCII holds it to the pattern).
func secretKeyASCII(key string) (match, ascii bool) {
	var buf [64]byte
	lower := buf[:0]
	if len(key) > len(buf) {
		lower = make([]byte, 0, len(key))
	}
	for i := 0; i < len(key); i++ {
		c := key[i]
		if c >= 0x80 {
			return false, false
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower = append(lower, c)
	}
	// the words of the secretKey pattern, lower case ("auth" covers
	// authorization and authorisation)
	needles := [...]string{"auth", "cookie", "token", "secret", "password", "passwd", "passphrase",
		"apikey", "api-key", "api_key", "session", "signature", "credential", "privatekey", "private-key", "private_key"}
	for _, n := range needles {
		if bytes.Contains(lower, []byte(n)) {
			return true, true
		}
	}
	return false, true
}

// provenance is the value a bundle entry's provenance holds under key k
// for the recorded value v.
func (r *redactor) provenance(k, v string) string {
	if r.secretKey(k) {
		return Redacted
	}
	return redactURL(v)
}

// BundleProvenance is a manifest entry's provenance as Build writes it into
// the bundle: the value under a key that names a credential replaced by
// Redacted, the user information and credential-named query values of URLs
// dropped. The store check compares a bundle's provenance with it.
func BundleProvenance(p map[string]string) map[string]string {
	red := newRedactor()
	out := make(map[string]string, len(p))
	for k, v := range p {
		out[k] = red.provenance(k, v)
	}
	return out
}

func (r *redactor) value(key string, v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = r.value(k, x)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = r.value(k, x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.value(key, x)
		}
		return out
	case []string:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = r.value(key, x)
		}
		return out
	case string:
		if t == Redacted || t == "" {
			return t
		}
		if key != "" && r.secretKey(key) {
			return Redacted
		}
		if secretValue().MatchString(strings.TrimSpace(t)) {
			return Redacted
		}
		return redactURL(t)
	default:
		if key != "" && r.secretKey(key) && v != nil {
			if _, isBool := v.(bool); !isBool {
				return Redacted
			}
		}
		return v
	}
}

// redactURL drops user information and credential-named query values from
// something shaped like an absolute URL; anything else is returned as is.
func redactURL(s string) string {
	i := strings.Index(s, "://")
	if i <= 0 {
		return s
	}
	head, rest := s[:i+3], s[i+3:]
	authorityEnd := len(rest)
	if j := strings.IndexAny(rest, "/?#"); j >= 0 {
		authorityEnd = j
	}
	if at := strings.LastIndexByte(rest[:authorityEnd], '@'); at >= 0 {
		rest = Redacted + "@" + rest[at+1:]
	}
	q := strings.IndexByte(rest, '?')
	if q < 0 {
		return head + rest
	}
	query, frag := rest[q+1:], ""
	if h := strings.IndexByte(query, '#'); h >= 0 {
		query, frag = query[:h], query[h:]
	}
	parts := strings.Split(query, "&")
	for n, part := range parts {
		k, _, hasValue := strings.Cut(part, "=")
		if uk, err := url.QueryUnescape(k); err == nil {
			k = uk
		}
		if hasValue && secretKey().MatchString(k) {
			name, _, _ := strings.Cut(part, "=")
			parts[n] = name + "=" + Redacted
		}
	}
	return head + rest[:q+1] + strings.Join(parts, "&") + frag
}
