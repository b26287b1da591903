package adapters

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/readproof/readproof/adapters/sourcespec"
)

func init() { Register("http", openHTTP) }

// httpSource reads one URL through the guarded client.
type httpSource struct {
	spec    Spec
	u       *url.URL
	shown   string // the URL as safe to show
	headers []declHeader
	env     Env
	n       *netClient
	max     int64
}

// declHeader is a header as declared, with the variables it references.
type declHeader struct {
	name  string
	value string
	refs  []string
}

func openHTTP(spec Spec, env Env) (Source, error) {
	if spec.URL == "" {
		return broken(fail("", ErrConfig, nil, "http source has no url; write source = { type = \"http\", url = \"https://example.com/doc.md\" }"))
	}
	shown := sourcespec.RedactURL(spec.URL)
	u, err := parseSourceURL(spec.URL)
	if err != nil {
		return broken(fail("", ErrConfig, nil, "http source url %s is malformed (%v); write a full URL such as https://example.com/doc.md", shown, err))
	}
	s := &httpSource{spec: spec, u: u, shown: shown, env: env, n: newNetClient(env.Network), max: env.MaxBytesOrDefault()}
	if err := s.n.g.checkURL(u); err != nil {
		return broken(err.(*Error))
	}
	names := make([]string, 0, len(spec.Headers))
	for k := range spec.Headers {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := spec.Headers[k]
		if err := checkHeader(k, v, "headers"); err != nil {
			return broken(err)
		}
		refs, err := sourcespec.RefNames(v)
		if err != nil {
			return broken(fail("", ErrConfig, nil, "header %q: %v", k, err))
		}
		for _, name := range refs {
			if !env.EnvAllowed(name) {
				return broken(refuse("", RuleEnvAllow, "header %q references ${%s}, which readproof.toml does not allow; %s", k, name, hintEnv))
			}
		}
		s.headers = append(s.headers, declHeader{name: k, value: v, refs: refs})
		if len(refs) > 0 || sourcespec.CredentialHeader(k, v) {
			s.n.g.secretHeaders = append(s.n.g.secretHeaders, k)
		}
	}
	if len(spec.Headers) > 0 && sourcespec.CleartextRemote(spec.URL) {
		return broken(refuse("", RuleCleartext, "%s is plain http:// to another machine, and the source's headers would send their secrets to it unencrypted; %s", shown, sourcespec.HintCleartext))
	}
	// Public headers are sent as written: no references, nothing secret.
	public := make([]string, 0, len(spec.PublicHeaders))
	for k := range spec.PublicHeaders {
		public = append(public, k)
	}
	sort.Strings(public)
	for _, k := range public {
		v := spec.PublicHeaders[k]
		if err := checkHeader(k, v, "public_headers"); err != nil {
			return broken(err)
		}
		if _, dup := spec.Headers[k]; dup {
			return broken(fail("", ErrConfig, nil, "header %q is declared in both headers and public_headers; keep one", k))
		}
		s.headers = append(s.headers, declHeader{name: k, value: strings.ReplaceAll(v, "$", "$$")})
	}
	return s, nil
}

// checkHeader refuses a declared header whose name is not an HTTP token or
// whose value holds a control character; table names where it is declared.
func checkHeader(name, value, table string) *Error {
	if !sourcespec.ValidHeaderName(name) {
		return fail("", ErrConfig, nil, "header name %q is not a valid HTTP header name; fix %s in readproof.toml", name, table)
	}
	if sourcespec.BadHeaderByte(value) {
		return fail("", ErrConfig, nil, "header %q contains a control character; fix %s in readproof.toml", name, table)
	}
	return nil
}

// parseSourceURL parses a declared URL, describing a failure without
// repeating the URL (which may hold user information).
func parseSourceURL(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return nil, ue.Err
		}
		return nil, errors.New("not a URL")
	}
	if u.Scheme == "" {
		return nil, errors.New("no scheme")
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if (u.Scheme == "http" || u.Scheme == "https") && u.Host == "" {
		return nil, errors.New("no host")
	}
	return u, nil
}

// expandHeaders resolves the declared headers' ${NAME} references. It
// returns the values it expanded, and the variables they came from, so
// they can be kept out of the result.
func (s *httpSource) expandHeaders() (http.Header, []string, []string, error) {
	h := http.Header{}
	var secrets, names []string
	lookup := s.env.Lookup()
	for _, d := range s.headers {
		for _, name := range d.refs {
			if v, ok := lookup(name); ok {
				if v == "" {
					// sent, "Bearer " would come back as the server's 401
					return nil, secrets, names, fail("", ErrConfig, nil, "header %q: environment variable %s is set but empty; put the secret in it (a CI job gets an empty value for a secret it is not given, as in a pull request from a fork)", d.name, name)
				}
				secrets, names = append(secrets, v), append(names, name)
			}
		}
		v, err := sourcespec.ExpandRefs(d.value, lookup)
		if err != nil {
			var unset *sourcespec.UnsetError
			if errors.As(err, &unset) {
				return nil, secrets, names, fail("", ErrConfig, nil, "header %q: environment variable %s is not set; export it before running readproof", d.name, unset.Name)
			}
			return nil, secrets, names, fail("", ErrConfig, nil, "header %q: %v", d.name, err)
		}
		if sourcespec.BadHeaderByte(v) {
			return nil, secrets, names, fail("", ErrConfig, nil, "header %q: a referenced variable (%s) holds a control character such as a newline; fix its value", d.name, strings.Join(d.refs, ", "))
		}
		h.Set(d.name, v)
	}
	return h, secrets, names, nil
}

// What a server says about its document is recorded in every observation
// and manifest entry that reads it (an ETag is its revision): a value
// longer than these is ignored, as if the server had not sent it (the
// revision is then the content's hash, the type the extension's or the
// sniffed one).
const (
	maxETag         = 512
	maxLastModified = 64
	maxContentType  = 256
)

// bounded is v, or "" when it is longer than max bytes.
func bounded(v string, max int) string {
	if len(v) > max {
		return ""
	}
	return v
}

func (s *httpSource) Fetch(ctx context.Context, req Request) (res Result, err error) {
	uri := req.URI
	if err := checkCtx(ctx, uri, "fetching "+s.shown); err != nil {
		return Result{}, err
	}
	hdr, secrets, names, err := s.expandHeaders()
	scrub := newScrubber(secrets)
	defer func() {
		if err == nil {
			if name := secretIn(res.Content, secrets, names); name != "" {
				res, err = Result{}, refuseSecretInDocument(uri, s.shown, name)
			}
		}
		scrub.result(&res)
		err = scrub.err(err)
	}()
	if err != nil {
		return Result{}, withURI(uri, err)
	}
	prev := req.Previous
	conditional := false
	if prev != nil {
		if prev.ETag != "" {
			hdr.Set("If-None-Match", prev.ETag)
			conditional = true
		}
		if prev.LastModified != "" {
			hdr.Set("If-Modified-Since", prev.LastModified)
			conditional = true
		}
	}
	bctx, cancel := s.n.bound(ctx)
	defer cancel()
	resp, err := s.n.get(ctx, bctx, uri, s.u, hdr, s.max, s.shown)
	if err != nil {
		return Result{}, err
	}
	prov := map[string]string{"source_type": "http", "url": s.shown, "status": strconv.Itoa(resp.status)}
	if resp.finalURL != nil && resp.finalURL.String() != s.u.String() {
		prov["final_url"] = scrub.url(sourcespec.RedactURL(resp.finalURL.String()))
	}
	etag := bounded(resp.header.Get("ETag"), maxETag)
	lastMod := bounded(resp.header.Get("Last-Modified"), maxLastModified)
	if etag != "" {
		prov["etag"] = etag
	}
	switch {
	case resp.status == http.StatusNotModified && conditional:
		r := Result{NotModified: true, ETag: orDefault(etag, prev.ETag), LastModified: orDefault(lastMod, prev.LastModified), Provenance: prov}
		r.Revision = prev.Revision
		if etag != "" {
			r.Revision = etag
		}
		return r, nil
	case resp.status == http.StatusNotFound || resp.status == http.StatusGone:
		return Result{}, fail(uri, ErrNotFound, nil, "%s answered %s; check url in readproof.toml", s.shown, statusText(resp.status))
	case resp.status == http.StatusUnauthorized || resp.status == http.StatusForbidden:
		return Result{}, fail(uri, nil, nil, "%s answered %s; check the credentials in the source's headers", s.shown, statusText(resp.status))
	case resp.status < 200 || resp.status > 299 || resp.status == http.StatusPartialContent:
		return Result{}, fail(uri, nil, nil, "%s answered %s; check the server or the url", s.shown, statusText(resp.status))
	}
	rev := etag
	if rev == "" {
		rev = shortHash(resp.body)
	}
	return Result{
		Content:      resp.body,
		ContentType:  httpContentType(bounded(resp.header.Get("Content-Type"), maxContentType), resp.finalURL.Path, resp.body),
		Revision:     rev,
		Provenance:   prov,
		ETag:         etag,
		LastModified: lastMod,
	}, nil
}
