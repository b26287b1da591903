package policy

import (
	"fmt"
	"mime"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/readproof/readproof/adapters/sourcespec"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/text"
)

// Bounds on [network].max_redirects.
const maxRedirectsLimit = 20

// build checks the meaning of the decoded document and fills f.
func (c *checker) build(f *File, raw *rawFile) {
	if raw.Version != nil && *raw.Version != 1 {
		h := "this readproof reads version 1 policy files; write version = 1"
		if *raw.Version > 1 {
			h = "a newer readproof wrote this file: upgrade readproof (this one reads version 1 policy files)"
		}
		c.add(root.child("version"), fmt.Sprintf("unsupported version %d", *raw.Version), h, nil)
	}

	dp := root.child("defaults")
	if raw.Defaults.Policy != nil {
		if s, ok := c.strategy(dp.child("policy"), *raw.Defaults.Policy); ok {
			f.Defaults.Policy = s
		}
	}
	if raw.Defaults.MaxAge != nil {
		f.Defaults.MaxAge = c.maxAge(dp.child("max_age"), *raw.Defaults.MaxAge)
	}
	if raw.Defaults.MaxBytes != nil {
		if n := c.size(dp.child("max_bytes"), raw.Defaults.MaxBytes.v); n > 0 {
			f.Defaults.MaxBytes = n
		}
	}
	if f.Defaults.Policy == AllowStale && raw.Defaults.MaxAge == nil {
		c.add(dp.child("policy"), "allow_stale needs max_age",
			`add max_age = "1h" (or another duration) to [defaults]`, nil)
	}

	c.sources(f, raw.Sources)
	c.network(f, raw.Network)

	f.SigningKey = c.keyFile(root.child("signing").child("key"), raw.Signing.Key, f.Dir)
	f.AllowedSigners = c.keyFile(root.child("signing").child("allowed_signers"), raw.Signing.AllowedSigners, f.Dir)
	f.ProbeKey = c.keyFile(root.child("probe").child("key"), raw.Probe.Key, f.Dir)
	f.ReceiptsKey = c.keyFile(root.child("receipts").child("key"), raw.Receipts.Key, f.Dir)

	// The fast path finds duplicate URIs once the resources are indexed
	// (uriClash); the slow path words them.
	var seen map[[2]string]seenURI
	if c.fast == nil {
		seen = make(map[[2]string]seenURI, len(raw.Resource))
	}
	switch n := len(raw.Resource); {
	case n > 0 && len(f.res) == n:
		// fastDecode made the Resources, their sources decoded in place.
		f.res = f.res[:0]
	case n > 0:
		f.res = make([]Resource, 0, n)
	}
	rp := root.child("resource")
	// The paths resource[n] and resource[n].source: every resource needs
	// both, even when nothing is wrong (lines, the keys its source sets).
	// The slow path's are allocated together, since seen keeps them; the
	// fast path's are made anew for each resource in the same two places,
	// as nothing keeps them (an error is worded when it is added, and the
	// fast path gives up at the first).
	n := len(raw.Resource)
	if c.fast != nil {
		n = min(n, 1)
	}
	paths := make([]keyPath, 2*n)
	for i := range raw.Resource {
		if c.fast != nil && len(c.errs) > 0 {
			return // the fast path gives up: the slow path words every error
		}
		j := 2 * (i % max(n, 1))
		p, sp := &paths[j], &paths[j+1]
		*p = keyPath{parent: rp, isIdx: true, n: i + 1}
		*sp = keyPath{parent: p, name: "source"}
		// Checked in place: a Resource is 300 bytes, and copying each one
		// into the slice was measurable. Each slot is zero, but for the
		// source fastDecode put there (in the fast path every resource
		// before this one was accepted, so slot k is resource i's).
		k := len(f.res)
		f.res = f.res[:k+1]
		if !c.resource(f, p, sp, &raw.Resource[i], seen, &f.res[k]) {
			f.res[k] = Resource{}
			f.res = f.res[:k]
		}
	}
}

// seenURI is the first resource declaring a URI, and the URI's path as
// it declared it.
type seenURI struct {
	p    *keyPath
	path string
}

// caseCollision is the refusal of u, which differs from other only in
// letter case.
func caseCollision(u, other identity.URI, line int) string {
	return fmt.Sprintf("%s differs only in letter case from %s (line %d): their refs would be one file on the case-insensitive file systems of macOS and Windows",
		u.String(), other.String(), line)
}

func (c *checker) sources(f *File, s rawSources) {
	sp := root.child("sources")
	if s.Roots != nil {
		rp := sp.child("roots")
		if len(*s.Roots) == 0 {
			c.add(rp, "roots is empty", `list at least one directory; the default is roots = ["."]`, nil)
		}
		var roots []string
		for i, r := range *s.Roots {
			abs, err := expandPath(r, f.Dir)
			if err != nil {
				c.add(rp.index(i+1), err.Error(), "write a directory, relative to the policy file or absolute", nil)
				continue
			}
			roots = append(roots, resolveExisting(abs))
		}
		if len(roots) > 0 {
			f.Roots = roots
		}
	}
	for i, name := range s.Env {
		if !validEnvName(name) {
			c.add(sp.child("env").index(i+1), fmt.Sprintf("%q is not an environment variable name", text.ShortenWith(name, 64, "...")),
				"use letters, digits and '_', not starting with a digit", nil)
			continue
		}
		if !contains(f.EnvAllow, name) {
			f.EnvAllow = append(f.EnvAllow, name)
		}
	}
	if s.CacheDir != nil {
		abs, err := expandPath(*s.CacheDir, f.Dir)
		if err != nil {
			c.add(sp.child("cache_dir"), err.Error(), "remove cache_dir to use the default, or write a directory", nil)
		} else {
			f.CacheDir = abs
		}
	}
}

func (c *checker) network(f *File, n rawNetwork) {
	np := root.child("network")
	for i, h := range n.AllowHosts {
		host, msg := normalizeHost(h)
		if msg != "" {
			c.add(np.child("allow_hosts").index(i+1), msg,
				"write a bare host name such as \"policies.internal\": no scheme, port, path or wildcard", nil)
			continue
		}
		if !contains(f.Network.AllowHosts, host) {
			f.Network.AllowHosts = append(f.Network.AllowHosts, host)
		}
	}
	for i, s := range n.AllowCIDRs {
		p := np.child("allow_cidrs").index(i + 1)
		pfx, err := netip.ParsePrefix(strings.TrimSpace(s))
		if err != nil {
			hint := `write an address range such as "10.0.0.0/8" or "127.0.0.1/32"`
			if a, err := netip.ParseAddr(strings.TrimSpace(s)); err == nil {
				hint = fmt.Sprintf("for a single address write %q", netip.PrefixFrom(a, a.BitLen()).String())
			}
			c.add(p, fmt.Sprintf("%q is not a CIDR range", text.ShortenWith(s, 64, "...")), hint, nil)
			continue
		}
		if m := pfx.Masked(); m != pfx {
			c.add(p, fmt.Sprintf("%q has bits set beyond the /%d prefix", s, pfx.Bits()),
				fmt.Sprintf("write %q for the whole range or %q for the one address",
					m.String(), netip.PrefixFrom(pfx.Addr(), pfx.Addr().BitLen()).String()), nil)
			continue
		}
		f.Network.AllowCIDRs = append(f.Network.AllowCIDRs, pfx)
	}
	if n.Timeout != nil {
		if d := c.duration(np.child("timeout"), *n.Timeout); d > 0 {
			f.Network.Timeout = d
		}
	}
	if n.MaxRedirects != nil {
		if v := *n.MaxRedirects; v < 0 || v > maxRedirectsLimit {
			c.add(np.child("max_redirects"), fmt.Sprintf("max_redirects %d is out of range", v),
				fmt.Sprintf("use 0 (no redirects) to %d", maxRedirectsLimit), nil)
		} else {
			f.Network.MaxRedirects = int(v)
		}
	}
}

func normalizeHost(h string) (string, string) {
	h = strings.TrimSuffix(strings.ToLower(strings.TrimSpace(h)), ".")
	if h == "" {
		return "", "empty host name"
	}
	if strings.Contains(h, "://") {
		return "", "a host name, not a URL, is expected"
	}
	if a, err := netip.ParseAddr(strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")); err == nil {
		return a.String(), ""
	}
	if len(h) > 253 {
		return "", "host name longer than 253 bytes"
	}
	for label := range strings.SplitSeq(h, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Sprintf("%q is not a valid host name", text.ShortenWith(h, 64, "..."))
		}
		for i := 0; i < len(label); i++ {
			ch := label[i]
			if !(ch >= 'a' && ch <= 'z' || ch >= '0' && ch <= '9' || ch == '-' || ch == '_') {
				return "", fmt.Sprintf("%q is not a valid host name", text.ShortenWith(h, 64, "..."))
			}
		}
	}
	return h, ""
}

func (c *checker) keyFile(p *keyPath, v *string, dir string) string {
	if v == nil {
		return ""
	}
	abs, err := expandPath(*v, dir)
	if err != nil {
		c.add(p, err.Error(), "remove the key to leave it unset, or write a file path", nil)
		return ""
	}
	return abs
}

func (c *checker) strategy(p *keyPath, s string) (Strategy, bool) {
	for _, v := range Strategies {
		if string(v) == s {
			return v, true
		}
	}
	valid := make([]string, len(Strategies))
	for i, v := range Strategies {
		valid[i] = string(v)
	}
	c.add(p, fmt.Sprintf("unknown policy %q", text.ShortenWith(s, 64, "...")), didYouMean(s, valid, "policies"), nil)
	return "", false
}

func (c *checker) duration(p *keyPath, s string) time.Duration {
	d, err := ParseDuration(s)
	if err != nil {
		c.add(p, err.Error(), durationHint, nil)
		return 0
	}
	return d
}

func (c *checker) maxAge(p *keyPath, s string) time.Duration {
	d, err := parseMaxAge(s)
	if err != nil {
		c.add(p, err.Error(), durationHint, nil)
		return 0
	}
	return d
}

func (c *checker) size(p *keyPath, v any) int64 {
	switch v := v.(type) {
	case int64:
		if v <= 0 {
			c.add(p, fmt.Sprintf("size %d must be positive", v), sizeHint, nil)
			return 0
		}
		return v
	case string:
		n, err := ParseSize(v)
		if err != nil {
			c.add(p, err.Error(), sizeHint, nil)
			return 0
		}
		return n
	}
	c.add(p, fmt.Sprintf("want a size, got %s", tomlTypeName(v)), sizeHint, nil)
	return 0
}

// resource checks the resource at p, resource[n], and fills r, which is
// zero but for its Source when that is rr.Source itself; sp is the path
// of its source, resource[n].source.
//
// seen maps each URI declared so far (namespace and path, the path in
// lower case) to the first resource declaring it; nil on the fast path,
// which leaves duplicates to uriClash.
func (c *checker) resource(f *File, p, sp *keyPath, rr *rawResource, seen map[[2]string]seenURI, r *Resource) bool {
	if c.fast != nil {
		r.Line = rr.line // c.lineOf(p): the resource's table is not kept
	} else {
		r.Line = c.lineOf(p)
	}
	before := len(c.errs)

	if rr.URI == nil {
		c.add(p.child("uri"), "missing uri", `add uri = "readproof://NAMESPACE/PATH" to this [[resource]]`, nil)
	} else if u, err := identity.ParseURI(*rr.URI); err != nil {
		c.add(p.child("uri"), err.Error(),
			"a resource URI is readproof://NAMESPACE/PATH: a lower-case namespace, then path segments of letters, digits, '-', '_' and '.'", err)
	} else if u.Tag != "" {
		c.add(p.child("uri"), fmt.Sprintf("a declared URI cannot carry a tag (@%s)", u.Tag),
			fmt.Sprintf("declare %s; tags are set with readproof tag set and read as %s", u.String(), u.Ref()), nil)
	} else if seen == nil {
		r.URI = u
	} else if first, dup := seen[[2]string{u.Namespace, strings.ToLower(u.Path)}]; dup && first.path == u.Path {
		c.add(p.child("uri"), fmt.Sprintf("%s is declared twice, at line %d and again at line %d",
			u.String(), c.lineOf(first.p.child("uri")), c.lineOf(p.child("uri"))), "remove or rename one of the two [[resource]] blocks", ErrDuplicate)
	} else if dup {
		other := identity.URI{Namespace: u.Namespace, Path: first.path}
		c.add(p.child("uri"), caseCollision(u, other, c.lineOf(first.p.child("uri"))), "rename one of the two [[resource]] blocks", ErrDuplicate)
	} else {
		seen[[2]string{u.Namespace, strings.ToLower(u.Path)}] = seenURI{p, u.Path}
		r.URI = u
	}

	strat := f.Defaults.Policy
	if rr.Policy != nil {
		if s, ok := c.strategy(p.child("policy"), *rr.Policy); ok {
			strat = s
		}
	}
	r.Freshness.Strategy = strat

	if rr.MaxAge != nil {
		d := c.maxAge(p.child("max_age"), *rr.MaxAge)
		if strat != AllowStale {
			c.add(p.child("max_age"), fmt.Sprintf("max_age applies only to allow_stale, and this resource is %s", strat),
				`remove max_age, or set policy = "allow_stale"`, nil)
		}
		r.Freshness.MaxAge = d
	} else if strat == AllowStale {
		r.Freshness.MaxAge = f.Defaults.MaxAge
		if r.Freshness.MaxAge == 0 {
			c.add(p.child("max_age"), "allow_stale needs max_age, and [defaults] sets none",
				`add max_age = "1h" (or another duration) to this resource or to [defaults]`, nil)
		}
	}

	if strat == Pinned {
		switch {
		case rr.Snapshot == nil:
			c.add(p.child("snapshot"), "pinned needs snapshot",
				`add snapshot = "<40-hex snapshot id>"; `+"`readproof history --json URI`"+` lists the snapshots with their whole ids`, nil)
		case !identity.IsObjectID(*rr.Snapshot):
			hint := "a snapshot id is 40 lower-case hex digits: `readproof history --json URI` prints them whole (the history table shows the first 12)"
			if identity.IsObjectID(strings.ToLower(*rr.Snapshot)) {
				hint = "write the snapshot id in lower case"
			}
			c.add(p.child("snapshot"), fmt.Sprintf("%q is not a snapshot id", text.ShortenWith(*rr.Snapshot, 64, "...")), hint, nil)
		default:
			r.Freshness.Snapshot = *rr.Snapshot
		}
	} else if rr.Snapshot != nil {
		c.add(p.child("snapshot"), fmt.Sprintf("snapshot applies only to pinned resources, and this resource is %s", strat),
			`remove snapshot, or set policy = "pinned"`, nil)
	}

	if rr.ContentType != nil {
		if _, _, err := mime.ParseMediaType(*rr.ContentType); err != nil || hasControl(*rr.ContentType) {
			c.add(p.child("content_type"), fmt.Sprintf("%q is not a media type", text.ShortenWith(*rr.ContentType, 64, "...")),
				`write a media type such as "text/markdown" or "application/json; charset=utf-8"`, nil)
		} else {
			r.ContentType = *rr.ContentType
		}
	}
	if rr.Description != nil {
		if hasControl(*rr.Description) {
			c.add(p.child("description"), "description contains a control character (a newline or an escape)",
				"keep the description to one line of text", nil)
		} else {
			r.Description = *rr.Description
		}
	}

	if rr.Source == nil {
		c.add(p.child("source"), "missing source",
			`add source = { type = "filesystem", path = "..." } (types: filesystem, http, github, git)`, nil)
	} else {
		if rr.Source != &r.Source {
			r.Source = *rr.Source
		}
		var keys keySet
		if c.fast != nil {
			keys = keySet{c: c, parent: sp, bits: rr.srcKeys}
		} else {
			keys = c.presence(sp)
		}
		c.source(f, sp, &r.Source, keys)
	}
	return len(c.errs) == before
}

// sourceRule lists the keys a source type requires and allows.
type sourceRule struct{ required, optional []string }

var (
	fsRule     = sourceRule{required: []string{"path"}}
	httpRule   = sourceRule{required: []string{"url"}, optional: []string{"headers", "public_headers"}}
	githubRule = sourceRule{required: []string{"owner", "repo", "path"}, optional: []string{"ref", "api_base", "token_env"}}
	gitRule    = sourceRule{required: []string{"url", "path"}, optional: []string{"ref"}}
)

// sourceRuleOf returns the rule of source type typ (a switch: a map
// lookup a resource was measurable).
func sourceRuleOf(typ string) (sourceRule, bool) {
	switch typ {
	case "filesystem":
		return fsRule, true
	case "http":
		return httpRule, true
	case "github":
		return githubRule, true
	case "git":
		return gitRule, true
	}
	return sourceRule{}, false
}

func (r sourceRule) allows(k string) bool {
	return k == "type" || contains(r.required, k) || contains(r.optional, k)
}

func (r sourceRule) keys() string {
	return strings.Join(append(append([]string{"type"}, r.required...), r.optional...), ", ")
}

var specType = reflect.TypeOf(sourcespec.Spec{})

// source checks the source at sp, spec, whose keys are keys, and
// completes it (default refs, the allowed token variable's name).
func (c *checker) source(f *File, sp *keyPath, spec *sourcespec.Spec, keys keySet) {
	present := keys.has
	if !present("type") {
		c.add(sp.child("type"), "missing source type",
			"add type = \"filesystem\", \"http\", \"github\" or \"git\" to the source", sourcespec.ErrConfig)
		return
	}
	rule, known := sourceRuleOf(spec.Type)
	if !known {
		c.add(sp.child("type"), fmt.Sprintf("unknown source type %q", text.ShortenWith(spec.Type, 64, "...")),
			didYouMean(spec.Type, SourceTypes, "known types"), sourcespec.ErrConfig)
		return
	}
	typ := spec.Type
	notTaken := func(k string) {
		c.add(sp.child(k), fmt.Sprintf("%s sources do not take %s", typ, k),
			fmt.Sprintf("remove it; %s sources take %s", typ, rule.keys()), sourcespec.ErrConfig)
	}
	names, _ := tomlFields(specType)
	for _, k := range names {
		if present(k) && !rule.allows(k) {
			notTaken(k)
		}
	}
	for _, k := range rule.required {
		if !present(k) {
			c.add(sp.child(k), fmt.Sprintf("missing %s (required for %s sources)", k, typ),
				fmt.Sprintf("%s sources take %s", typ, rule.keys()), sourcespec.ErrConfig)
		}
	}
	bad := func(k, msg, hint string) { c.add(sp.child(k), msg, hint, sourcespec.ErrConfig) }

	switch typ {
	case "filesystem":
		if present("path") && (spec.Path == "" || hasControl(spec.Path) || strings.IndexByte(spec.Path, 0) >= 0) {
			bad("path", "path is empty or contains control characters",
				"write a file path, relative to the policy file or absolute")
		}
	case "http":
		if present("url") {
			if msg, hint := checkHTTPURL(spec.URL, "url"); msg != "" {
				bad("url", msg, hint)
			}
		}
		var buf [4]string
		folded := c.headers(f, sp, spec.Headers, foldedNames{names: buf[:0]})
		c.publicHeaders(sp, spec.PublicHeaders, folded)
		if len(spec.Headers) > 0 && sourcespec.CleartextRemote(spec.URL) {
			c.add(sp.child("url"), "url is plain http:// to another machine, and headers would send their secrets to it unencrypted", sourcespec.HintCleartext, sourcespec.ErrRefused)
		}
		if len(spec.Headers) == 0 {
			spec.Headers = nil
		}
		if len(spec.PublicHeaders) == 0 {
			spec.PublicHeaders = nil
		}
	case "github":
		if present("owner") && !validGitHubName(spec.Owner, false) {
			bad("owner", fmt.Sprintf("%q is not a GitHub owner name", text.ShortenWith(spec.Owner, 64, "...")),
				"write the user or organisation name as it appears in github.com/OWNER/REPO")
		}
		if present("repo") && !validGitHubName(spec.Repo, true) {
			bad("repo", fmt.Sprintf("%q is not a GitHub repository name", text.ShortenWith(spec.Repo, 64, "...")),
				"write the repository name as it appears in github.com/OWNER/REPO")
		}
		if present("path") {
			if msg := checkRepoPath(spec.Path); msg != "" {
				bad("path", msg, "write the file's path from the repository root, e.g. docs/policy.md")
			}
		}
		if present("api_base") {
			if msg, hint := checkHTTPURL(spec.APIBase, "api_base"); msg != "" {
				bad("api_base", msg, hint)
			}
		}
		if present("token_env") {
			name := spec.TokenEnv
			if inner, ok := strings.CutPrefix(name, "${"); ok && strings.HasSuffix(inner, "}") {
				name = strings.TrimSuffix(inner, "}")
			}
			switch {
			case !validEnvName(name):
				// The value is not quoted: a token pasted here by mistake
				// must not reach the terminal or a log.
				bad("token_env", "token_env is not an environment variable name",
					`write token_env = "GITHUB_TOKEN": the name of the variable, never the token itself`)
			case !contains(f.EnvAllow, name):
				c.add(sp.child("token_env"), fmt.Sprintf("%s is not listed in [sources].env; add it there to let this source read it", name),
					fmt.Sprintf(`add env = [%q] to [sources]`, name), sourcespec.ErrRefused)
			default:
				spec.TokenEnv = name
				if sourcespec.CleartextRemote(spec.APIBase) {
					c.add(sp.child("api_base"), "api_base is plain http:// to another machine, and the token in token_env would go to it unencrypted", sourcespec.HintCleartext, sourcespec.ErrRefused)
				}
			}
		}
		if spec.Ref == "" && !present("ref") {
			spec.Ref = DefaultGitHubRef
		}
	case "git":
		if present("url") {
			if msg, hint := checkGitURL(spec.URL); msg != "" {
				bad("url", msg, hint)
			}
		}
		if present("path") {
			if msg := checkRepoPath(spec.Path); msg != "" {
				bad("path", msg, "write the file's path from the repository root, e.g. docs/policy.md")
			}
		}
		if spec.Ref == "" && !present("ref") {
			spec.Ref = DefaultGitRef
		}
	}
	if (typ == "github" || typ == "git") && present("ref") {
		if msg := checkRef(spec.Ref); msg != "" {
			bad("ref", msg, "write a branch, tag or commit id, e.g. main, v1.2.0 or refs/heads/release")
		}
	}
}

// headers checks [headers]: every value references an allow-listed
// variable (${NAME}); a literal value is refused, a credential-looking one
// with its own message. sp is the source's path. It returns folded with
// the header names seen added, each name once whatever its case.
func (c *checker) headers(f *File, sp *keyPath, h map[string]string, folded foldedNames) foldedNames {
	if len(h) == 0 {
		return folded
	}
	var buf [4]string
	names := buf[:0]
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names) // errors are ordered by line later
	var refBuf [4]string
	for _, name := range names {
		// The path is made only for an error.
		p := func() *keyPath { return sp.child("headers").child(name) }
		if !isToken(name) {
			c.add(p(), "invalid header name",
				"header names are RFC 7230 tokens: letters, digits and !#$%&'*+-.^_`|~, no spaces or colons", sourcespec.ErrConfig)
			continue
		}
		if prev := folded.find(name); prev != "" {
			c.add(p(), fmt.Sprintf("header %s repeats %s (header names ignore case)", name, prev),
				"keep one of the two", sourcespec.ErrConfig)
			continue
		}
		folded = folded.add(name)
		v := h[name]
		// Header values are never quoted in messages: they may hold secrets.
		if !validFieldValue(v) {
			c.add(p(), "header value contains a control character (a newline, NUL or escape)",
				"a header value is one line of visible characters", sourcespec.ErrConfig)
			continue
		}
		refs, err := sourcespec.AppendRefNames(refBuf[:0], v)
		if err != nil {
			c.add(p(), err.Error(), "write a reference as ${NAME}, NAME being letters, digits and '_'", sourcespec.ErrConfig)
			continue
		}
		for _, ref := range refs {
			if !contains(f.EnvAllow, ref) {
				c.add(p(), fmt.Sprintf("${%s} is not listed in [sources].env; add it there to let this header use it", ref),
					fmt.Sprintf(`add env = [%q] to [sources]`, ref), sourcespec.ErrRefused)
			}
		}
		switch {
		case len(refs) == 0 && literalCredential(name, v):
			c.add(p(), "header holds a literal credential",
				"keep secrets out of readproof.toml: put the value in an environment variable, list it in [sources].env and write ${NAME}", sourcespec.ErrRefused)
		case len(refs) == 0:
			c.add(p(), "header value is literal text: readproof would store it in observations and print it",
				fmt.Sprintf(`a header value names a variable (${NAME}, the variable listed in [sources].env); a value that is not secret goes under public_headers, e.g. public_headers = { %s = "..." }`, encodeKey(name)), sourcespec.ErrRefused)
		}
	}
	return folded
}

// foldedNames are the header names of a source seen so far, each once
// whatever its case: a slice for the few a source has, searched without
// a map, and a map once they are many (a search of the slice for each
// name was the square of their number).
type foldedNames struct {
	names   []string
	byLower map[string]string // the names by their lower case, once there are many
}

// maxFoldedSearch is the number of names foldedNames searches one by one.
const maxFoldedSearch = 16

// find returns the name seen that name repeats, ignoring case, or "".
// Header names are tokens (ASCII), for which EqualFold is comparing the
// names in lower case.
func (fn foldedNames) find(name string) string {
	if fn.byLower != nil {
		return fn.byLower[strings.ToLower(name)]
	}
	for _, f := range fn.names {
		if strings.EqualFold(f, name) {
			return f
		}
	}
	return ""
}

// add returns fn with name, which find did not find.
func (fn foldedNames) add(name string) foldedNames {
	if fn.byLower == nil && len(fn.names) < maxFoldedSearch {
		fn.names = append(fn.names, name)
		return fn
	}
	if fn.byLower == nil {
		fn.byLower = make(map[string]string, 2*maxFoldedSearch)
		for _, f := range fn.names {
			fn.byLower[strings.ToLower(f)] = f
		}
	}
	fn.byLower[strings.ToLower(name)] = name
	return fn
}

// publicHeaders checks [public_headers]: literal values the policy file
// declares public. They may not reference variables, may not look like
// credentials, and may not repeat a name from headers (folded, as headers
// records them). sp is the source's path.
func (c *checker) publicHeaders(sp *keyPath, h map[string]string, folded foldedNames) {
	if len(h) == 0 {
		return
	}
	var buf [4]string
	names := buf[:0]
	for k := range h {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, name := range names {
		p := func() *keyPath { return sp.child("public_headers").child(name) }
		v := h[name]
		switch {
		case !isToken(name):
			c.add(p(), "invalid header name",
				"header names are RFC 7230 tokens: letters, digits and !#$%&'*+-.^_`|~, no spaces or colons", sourcespec.ErrConfig)
			continue
		case folded.find(name) != "":
			c.add(p(), fmt.Sprintf("header %s is declared twice (headers and public_headers, names ignore case)", name),
				"keep one of the two", sourcespec.ErrConfig)
			continue
		case !validFieldValue(v):
			c.add(p(), "header value contains a control character (a newline, NUL or escape)",
				"a header value is one line of visible characters", sourcespec.ErrConfig)
			continue
		case strings.Contains(v, "${"):
			c.add(p(), "a public header cannot reference a variable: its value is stored and shown as written",
				"move it to headers, where ${NAME} references are expanded at fetch time and never stored", sourcespec.ErrConfig)
			continue
		case literalCredential(name, v):
			c.add(p(), "public header holds what looks like a credential",
				"keep secrets out of readproof.toml: put the value in an environment variable, list it in [sources].env and write ${NAME} under headers", sourcespec.ErrRefused)
			continue
		}
		folded = folded.add(name)
	}
}

var (
	credentialName = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(proxy-)?authorization$|^cookie$|token|secret|passw(or)?d|api-?key|credential`)
	})
	credentialShape = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)^(bearer|basic|token|digest)\s+\S|^(ghp_|gho_|ghs_|ghu_|github_pat_|glpat-|sk-|xox[abp]-|AKIA)`)
	})
)

// literalCredential reports whether a header without ${NAME} references
// carries what looks like a secret, by its name or by the shape of its value.
func literalCredential(name, value string) bool {
	return credentialName().MatchString(name) || credentialShape().MatchString(strings.TrimSpace(value))
}

// plainURL reports whether s is SCHEME://HOST[:PORT][/PATH] with nothing
// in it url.Parse could refuse or read as more than that: a scheme of
// letters, a host of letters, digits, '.' and '-', a port of digits, and
// a path of letters, digits, '/' and "-._~" (no '%', '?', '#' or '@'), and
// returns the scheme. checkHTTPURL and checkGitURL accept such a URL of a
// scheme they take without parsing it: url.Parse was most of their cost.
// FuzzPlainURL holds it to their full checks.
func plainURL(s string) (scheme string, ok bool) {
	i := 0
	for i < len(s) && (s[i] >= 'a' && s[i] <= 'z' || s[i] >= 'A' && s[i] <= 'Z') {
		i++
	}
	if i == 0 || !strings.HasPrefix(s[i:], "://") {
		return "", false
	}
	scheme = s[:i]
	i += len("://")
	host := i
	for i < len(s) && (isAlnum(s[i]) || s[i] == '.' || s[i] == '-') {
		i++
	}
	if i == host {
		return "", false
	}
	if i < len(s) && s[i] == ':' {
		for i++; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		}
	}
	if i < len(s) && s[i] != '/' {
		return "", false
	}
	for ; i < len(s); i++ {
		if c := s[i]; !isAlnum(c) && c != '/' && c != '-' && c != '.' && c != '_' && c != '~' {
			return "", false
		}
	}
	return scheme, true
}

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// checkHTTPURL checks the URL of an http source or a github api_base.
func checkHTTPURL(s, key string) (msg, hint string) {
	if sch, ok := plainURL(s); ok && (strings.EqualFold(sch, "http") || strings.EqualFold(sch, "https")) {
		return "", ""
	}
	return checkHTTPURLParsed(s, key)
}

// checkHTTPURLParsed is checkHTTPURL for every URL, by url.Parse.
func checkHTTPURLParsed(s, key string) (msg, hint string) {
	if s == "" {
		return key + " is empty", `write a URL such as "https://host/path"`
	}
	if hasControl(s) || strings.ContainsAny(s, " \x00") {
		return key + " contains spaces or control characters", "percent-encode them"
	}
	if strings.Contains(s, "${") {
		return key + " contains a ${...} reference, and references are expanded only in headers",
			`send the secret in a header instead, e.g. Authorization = "Bearer ${TOKEN}"`
	}
	u, err := url.Parse(s)
	if err != nil {
		return key + " is not a valid URL", `write a URL such as "https://host/path"`
	}
	if sch := strings.ToLower(u.Scheme); sch != "http" && sch != "https" {
		if u.Scheme == "" {
			return key + " has no scheme", `write a URL such as "https://host/path"`
		}
		return fmt.Sprintf("%s scheme %q is not allowed", key, text.ShortenWith(u.Scheme, 32, "...")),
			"only http:// and https:// URLs can be fetched; use a filesystem or git source for local files"
	}
	if u.Host == "" || u.Hostname() == "" {
		return key + " has no host", `write a URL such as "https://host/path"`
	}
	if u.User != nil {
		return key + " carries user credentials",
			"remove user:password@ and send credentials in a header with a ${NAME} reference"
	}
	return "", ""
}

var remoteHelper = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*::`) })

// checkGitURL checks the URL of a git source.
func checkGitURL(s string) (msg, hint string) {
	if sch, ok := plainURL(s); ok {
		switch strings.ToLower(sch) {
		case "file", "http", "https", "ssh", "git":
			return "", ""
		}
	}
	return checkGitURLParsed(s)
}

// checkGitURLParsed is checkGitURL for every URL, by url.Parse.
func checkGitURLParsed(s string) (msg, hint string) {
	switch {
	case s == "":
		return "url is empty", "write a git URL such as https://host/org/repo.git, ssh://git@host/org/repo.git or file:///srv/repo.git"
	case strings.HasPrefix(s, "-"):
		return "url starts with '-'", "write a git URL; an argument-like value is refused"
	case hasControl(s) || strings.IndexByte(s, 0) >= 0:
		return "url contains control characters", "write a git URL on one line"
	case strings.Contains(s, "${"):
		return "url contains a ${...} reference, which is not expanded", "use an ssh key or a credential helper for private repositories"
	case remoteHelper().MatchString(s):
		return "url names a git remote helper (TRANSPORT::...)", "use file://, http://, https://, ssh:// or git:// URLs"
	}
	if strings.Contains(s, "://") {
		u, err := url.Parse(s)
		if err != nil {
			return "url is not a valid URL", "write a git URL such as https://host/org/repo.git"
		}
		switch strings.ToLower(u.Scheme) {
		case "file", "http", "https", "ssh", "git":
		default:
			return fmt.Sprintf("url scheme %q is not supported", text.ShortenWith(u.Scheme, 32, "...")),
				"use file://, http://, https://, ssh:// or git:// URLs"
		}
		if _, hasPassword := u.User.Password(); u.User != nil && hasPassword {
			return "url carries a password", "remove the password: use an ssh key or a credential helper"
		}
		if !strings.EqualFold(u.Scheme, "file") && u.Host == "" {
			return "url has no host", "write a git URL such as https://host/org/repo.git"
		}
	}
	return "", ""
}

func checkRepoPath(s string) string {
	switch {
	case s == "":
		return "path is empty"
	case strings.HasPrefix(s, "/"):
		return "path must be relative to the repository root"
	case hasControl(s) || strings.IndexByte(s, 0) >= 0:
		return "path contains control characters"
	}
	for seg := range strings.SplitSeq(s, "/") {
		switch seg {
		case "":
			return "path has an empty segment (a trailing or double '/')"
		case ".", "..":
			return "path may not contain '.' or '..' segments"
		}
	}
	return ""
}

func checkRef(s string) string {
	switch {
	case s == "":
		return "ref is empty"
	case strings.HasPrefix(s, "-"):
		return "ref starts with '-'"
	case strings.Contains(s, ".."):
		return "ref contains '..'"
	case strings.ContainsAny(s, " ~^:?*[\\") || hasControl(s):
		return "ref contains a character git does not allow in ref names"
	}
	return ""
}

func validGitHubName(s string, repo bool) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-':
		case repo && (c == '_' || c == '.'):
		default:
			return false
		}
	}
	return true
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
