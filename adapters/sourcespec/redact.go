package sourcespec

import (
	"net/url"
	"regexp"
	"strings"
	"sync"
)

// Redacted is the placeholder shown instead of a credential-looking value.
const Redacted = "[REDACTED]"

// The patterns below are compiled on first use, not at start-up: every
// readproof process imports this package, and most never redact anything
// (compiling them took about 1 ms of each process's start).

// credentialName matches header and query parameter names that carry
// credentials.
var credentialName = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)(authorization|cookie|token|secret|password|passwd|pwd|api[-_]?key|apikey|(^|[-_])key($|[-_])|auth|session|signature|sig$|credential|private)`)
})

// credentialValue matches values shaped like credentials whatever their
// header is called.
var credentialValue = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`(?i)^(bearer|basic|token|digest|negotiate)\s|(ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|sk-|xox[abpr]-|AKIA|ASIA|eyJ[A-Za-z0-9_-]{8,}\.)`)
})

// opaqueToken matches a long run of token characters mixing letters and
// digits, the shape of most API keys.
var opaqueToken = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9_\-+/=.~]{24,}$`) })

// Redacted returns a copy of s that is safe to show or store.
//
// A header is shown as "[REDACTED]" when its name looks like a credential
// (Authorization, Cookie, *token*, *secret*, *key*, ...), whatever its value,
// even a bare ${NAME} reference: "Bearer abc${X}" mixes a literal secret with a
// reference, and one rule is easier to trust than two. Any other header keeps
// its ${NAME} references (they name a variable, not its value) unless its
// literal text looks like a credential (a "Bearer " prefix, a known token
// prefix, or a long opaque token). URLs (url, api_base) lose their user
// information and the values of credential-looking query parameters.
func (s Spec) Redacted() Spec {
	out := s
	if s.Headers != nil {
		out.Headers = make(map[string]string, len(s.Headers))
		for k, v := range s.Headers {
			if CredentialHeader(k, v) {
				v = Redacted
			}
			out.Headers[k] = v
		}
	}
	out.URL = RedactURL(s.URL)
	out.APIBase = RedactURL(s.APIBase)
	return out
}

// CredentialHeader reports whether a declared header must be hidden.
func CredentialHeader(name, value string) bool {
	if credentialName().MatchString(name) {
		return true
	}
	literal := value
	if parts, err := ParseRefs(value); err == nil {
		var b strings.Builder
		for _, p := range parts {
			if !p.Ref {
				b.WriteString(p.Text)
			} else {
				b.WriteByte(' ')
			}
		}
		literal = b.String()
	}
	literal = strings.TrimSpace(literal)
	if credentialValue().MatchString(literal) {
		return true
	}
	for _, f := range strings.Fields(literal) {
		if opaqueToken().MatchString(f) && strings.ContainsAny(f, "0123456789") && strings.IndexFunc(f, isLetter) >= 0 {
			return true
		}
	}
	return false
}

func isLetter(r rune) bool { return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' }

var userinfo = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([a-zA-Z][a-zA-Z0-9+.-]*://)[^/?#]*@`) })

// RedactURL hides a URL's user information and the values of its
// credential-looking query parameters. A string that does not parse as a
// URL still loses anything that looks like user information.
func RedactURL(s string) string {
	if s == "" {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return userinfo().ReplaceAllString(s, "${1}"+Redacted+"@")
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		for i, kv := range q {
			k, _, ok := strings.Cut(kv, "=")
			name, err := url.QueryUnescape(k)
			if err != nil {
				name = k
			}
			if ok && credentialName().MatchString(name) {
				q[i] = k + "=" + Redacted
			}
		}
		u.RawQuery = strings.Join(q, "&")
	}
	out := u.String()
	// url.URL escapes the brackets of the placeholder; show them plainly.
	return strings.ReplaceAll(out, url.PathEscape(Redacted), Redacted)
}

// Describe returns a one-line, redacted description of where the source
// reads from: the path for filesystem, the URL for http,
// "owner/repo:path@ref" for github (with the API base when it is not
// GitHub's), "url:path@ref" for git.
func (s Spec) Describe() string {
	switch s.Type {
	case "filesystem":
		return s.Path
	case "http":
		return RedactURL(s.URL)
	case "github":
		d := s.Owner + "/" + s.Repo + ":" + strings.TrimPrefix(s.Path, "/") + "@" + orDefault(s.Ref, DefaultGitHubRef)
		if base := strings.TrimRight(s.APIBase, "/"); base != "" && base != DefaultGitHubAPI {
			d += " via " + RedactURL(base)
		}
		return d
	case "git":
		return RedactURL(s.URL) + ":" + strings.TrimPrefix(s.Path, "/") + "@" + orDefault(s.Ref, DefaultGitRef)
	}
	var parts []string
	for _, v := range []string{s.URL, s.Owner, s.Repo, s.Path, s.Ref} {
		if v != "" {
			parts = append(parts, v)
		}
	}
	if len(parts) > 0 {
		parts[0] = RedactURL(parts[0])
	}
	return s.Type + " " + strings.Join(parts, " ")
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// Defaults of the github and git sources, named by Describe.
const (
	DefaultGitHubAPI = "https://api.github.com"
	DefaultGitHubRef = "main"
	DefaultGitRef    = "HEAD"
)
