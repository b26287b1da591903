package adapters

import (
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/readproof/readproof/adapters/sourcespec"
)

func init() { Register("github", openGitHub) }

const (
	githubAPIVersion = "2022-11-28"
)

var githubName = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^[A-Za-z0-9._-]+$`) })

// githubSource reads one file through the GitHub contents API: first the
// commit the ref names (so the file and its commit agree even if the branch
// moves meanwhile), then the file at that commit.
type githubSource struct {
	spec      Spec
	base      *url.URL
	baseShown string
	ref       string
	path      string
	env       Env
	n         *netClient
	max       int64
}

func openGitHub(spec Spec, env Env) (Source, error) {
	for _, f := range []struct{ key, v string }{{"owner", spec.Owner}, {"repo", spec.Repo}} {
		if f.v == "" || f.v == "." || f.v == ".." || !githubName().MatchString(f.v) {
			return broken(fail("", ErrConfig, nil, "github source %s %q is not a GitHub name; write %s = \"...\" with letters, digits, '.', '-' or '_'", f.key, f.v, f.key))
		}
	}
	p, err := cleanRepoPath(spec.Path)
	if err != nil {
		return broken(fail("", ErrConfig, nil, "github source path %q %v; write the file's path in the repository, such as docs/policy.md", spec.Path, err))
	}
	ref := orDefault(spec.Ref, sourcespec.DefaultGitHubRef)
	if err := checkRefName(ref); err != nil {
		return broken(fail("", ErrConfig, nil, "github source ref %q %v; write a branch, a tag or a commit id", ref, err))
	}
	rawBase := strings.TrimRight(orDefault(spec.APIBase, sourcespec.DefaultGitHubAPI), "/")
	shown := sourcespec.RedactURL(rawBase)
	base, err := parseSourceURL(rawBase)
	if err != nil {
		return broken(fail("", ErrConfig, nil, "github source api_base %s is malformed (%v); write a URL such as https://github.example.com/api/v3", shown, err))
	}
	if base.User != nil || base.RawQuery != "" || base.Fragment != "" {
		return broken(fail("", ErrConfig, nil, "github source api_base %s must not carry user information, a query or a fragment; put a token in token_env instead", shown))
	}
	s := &githubSource{spec: spec, base: base, baseShown: shown, ref: ref, path: p, env: env, n: newNetClient(env.Network), max: env.MaxBytesOrDefault()}
	if err := s.n.g.checkURL(base); err != nil {
		return broken(err.(*Error))
	}
	if spec.TokenEnv != "" {
		if !sourcespec.ValidEnvName(spec.TokenEnv) {
			return broken(fail("", ErrConfig, nil, "github source token_env %q is not a variable name; write token_env = \"GITHUB_TOKEN\"", spec.TokenEnv))
		}
		if !env.EnvAllowed(spec.TokenEnv) {
			return broken(refuse("", RuleEnvAllow, "token_env names %s, which readproof.toml does not allow; %s", spec.TokenEnv, hintEnv))
		}
	}
	if spec.TokenEnv != "" && sourcespec.CleartextRemote(rawBase) {
		return broken(refuse("", RuleCleartext, "api_base %s is plain http:// to another machine, and the token in %s would go to it unencrypted; %s", shown, spec.TokenEnv, sourcespec.HintCleartext))
	}
	s.n.g.secretHeaders = []string{"Authorization"}
	return s, nil
}

// cleanRepoPath checks a path inside a repository: relative, slash
// separated, no empty, "." or ".." segments.
func cleanRepoPath(p string) (string, error) {
	p = strings.TrimPrefix(p, "/")
	if p == "" {
		return "", errors.New("is empty")
	}
	for _, seg := range strings.Split(p, "/") {
		switch seg {
		case "", ".", "..":
			return "", errors.New("has an empty, \".\" or \"..\" segment")
		}
	}
	if strings.IndexFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return "", errors.New("contains a control character")
	}
	return p, nil
}

// checkRefName applies the parts of git's ref-name rules that matter for
// building URLs: no control characters, spaces, "..", or ~^:?*[\ .
func checkRefName(ref string) error {
	if ref == "" {
		return errors.New("is empty")
	}
	if strings.Contains(ref, "..") || strings.HasPrefix(ref, "/") || strings.HasSuffix(ref, "/") || strings.HasPrefix(ref, "-") {
		return errors.New("is not a valid ref name")
	}
	if strings.IndexFunc(ref, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune("~^:?*[\\", r) }) >= 0 {
		return errors.New("contains a character refs cannot hold")
	}
	return nil
}

func (s *githubSource) what() string {
	return s.spec.Owner + "/" + s.spec.Repo + ":" + s.path + "@" + s.ref
}

func (s *githubSource) endpoint(parts string, query url.Values) *url.URL {
	u := *s.base
	u.Path = strings.TrimRight(s.base.Path, "/") + "/repos/" + s.spec.Owner + "/" + s.spec.Repo + "/" + parts
	u.RawPath = ""
	if query != nil {
		u.RawQuery = query.Encode()
	}
	return &u
}

func (s *githubSource) Fetch(ctx context.Context, req Request) (res Result, err error) {
	uri := req.URI
	if err := checkCtx(ctx, uri, "fetching "+s.what()); err != nil {
		return Result{}, err
	}
	hdr := http.Header{}
	hdr.Set("X-GitHub-Api-Version", githubAPIVersion)
	var secrets []string
	if s.spec.TokenEnv != "" {
		tok, ok := s.env.Lookup()(s.spec.TokenEnv)
		if !ok {
			return Result{}, fail(uri, ErrConfig, nil, "token_env names %s, which is not set; export it before running readproof", s.spec.TokenEnv)
		}
		if tok == "" {
			// sent, GitHub's 401 would read as a token to renew
			return Result{}, fail(uri, ErrConfig, nil, "token_env names %s, which is set but empty; put a token in it (a CI job gets an empty value for a secret it is not given, as in a pull request from a fork), or leave token_env out to read a public repository without one", s.spec.TokenEnv)
		}
		secrets = append(secrets, tok)
		if sourcespec.BadHeaderByte(tok) {
			return Result{}, fail(uri, ErrConfig, nil, "the token in %s holds a control character such as a newline; fix its value", s.spec.TokenEnv)
		}
		hdr.Set("Authorization", "Bearer "+tok)
	}
	scrub := newScrubber(secrets)
	defer func() {
		if err == nil {
			if name := secretIn(res.Content, secrets, []string{s.spec.TokenEnv}); name != "" {
				res, err = Result{}, refuseSecretInDocument(uri, s.what(), name)
			}
		}
		scrub.result(&res)
		err = scrub.err(err)
	}()
	bctx, cancel := s.n.bound(ctx)
	defer cancel()

	// 1. The commit the ref names.
	h := hdr.Clone()
	h.Set("Accept", "application/vnd.github.sha")
	resp, err := s.n.get(ctx, bctx, uri, s.endpoint("commits/"+s.ref, nil), h, 64<<10, s.baseShown)
	if err != nil {
		return Result{}, err
	}
	switch resp.status {
	case http.StatusOK:
	case http.StatusNotFound:
		return Result{}, fail(uri, ErrNotFound, nil, "GitHub has no repository %s/%s with ref %q (404); check owner, repo and ref in readproof.toml, and that %s", s.spec.Owner, s.spec.Repo, s.ref, s.tokenAdvice())
	case http.StatusUnprocessableEntity, http.StatusConflict:
		return Result{}, fail(uri, ErrConfig, nil, "ref %q does not name a commit in %s/%s (%s); check ref in readproof.toml", s.ref, s.spec.Owner, s.spec.Repo, statusText(resp.status))
	default:
		return Result{}, s.apiErr(uri, resp)
	}
	commit, err := parseCommitSHA(resp.body)
	if err != nil {
		return Result{}, fail(uri, nil, err, "GitHub's answer for ref %q of %s/%s is not a commit id (%v); check api_base", s.ref, s.spec.Owner, s.spec.Repo, err)
	}

	// 2. The file at that commit.
	h = hdr.Clone()
	h.Set("Accept", "application/vnd.github+json")
	contentsURL := s.endpoint("contents/"+s.path, url.Values{"ref": {commit}})
	resp, err = s.n.get(ctx, bctx, uri, contentsURL, h, 2*s.max+64<<10, s.what())
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return Result{}, fail(uri, ErrTooLarge, nil, "%s is over the %d-byte limit; %s", s.what(), s.max, hintMaxBytes)
		}
		return Result{}, err
	}
	switch resp.status {
	case http.StatusOK:
	case http.StatusNotFound:
		return Result{}, fail(uri, ErrNotFound, nil, "no file %s in %s/%s at %s (commit %s); check path and ref in readproof.toml", s.path, s.spec.Owner, s.spec.Repo, s.ref, commit)
	default:
		return Result{}, s.apiErr(uri, resp)
	}
	info, err := parseContents(resp.body)
	if err != nil {
		if errors.Is(err, errIsDir) {
			return Result{}, refuse(uri, RuleRegular, "%s is a directory in %s/%s; point path at a file", s.path, s.spec.Owner, s.spec.Repo)
		}
		return Result{}, fail(uri, nil, err, "GitHub's answer for %s is not a file description (%v); check api_base", s.what(), err)
	}
	if info.Type != "file" {
		return Result{}, refuse(uri, RuleRegular, "%s is a %s in %s/%s, not a file; point path at a file", s.path, info.Type, s.spec.Owner, s.spec.Repo)
	}
	if info.Size > s.max {
		return Result{}, fail(uri, ErrTooLarge, nil, "%s is %d bytes, over the %d-byte limit; %s", s.what(), info.Size, s.max, hintMaxBytes)
	}
	var content []byte
	switch {
	case info.Encoding == "base64" && (info.Content != "" || info.Size == 0):
		content, err = base64.StdEncoding.DecodeString(info.Content)
		if err != nil {
			return Result{}, fail(uri, nil, err, "GitHub's content for %s is not valid base64 (%v); retry, or check api_base", s.what(), err)
		}
	default:
		// Files over 1 MB come without content ("encoding": "none"): read
		// them again in the raw media type, from the same API host.
		h = hdr.Clone()
		h.Set("Accept", "application/vnd.github.raw")
		resp, err = s.n.get(ctx, bctx, uri, contentsURL, h, s.max, s.what())
		if err != nil {
			return Result{}, err
		}
		if resp.status != http.StatusOK {
			return Result{}, s.apiErr(uri, resp)
		}
		content = resp.body
	}
	if int64(len(content)) > s.max {
		return Result{}, fail(uri, ErrTooLarge, nil, "%s is %d bytes, over the %d-byte limit; %s", s.what(), len(content), s.max, hintMaxBytes)
	}
	if !blobMatches(info.SHA, content) {
		return Result{}, fail(uri, nil, nil, "the content GitHub sent for %s does not match its blob id %s; retry later", s.what(), info.SHA)
	}
	prov := map[string]string{
		"source_type": "github",
		"owner":       s.spec.Owner,
		"repo":        s.spec.Repo,
		"path":        s.path,
		"ref":         s.ref,
		"commit":      commit,
		"blob":        info.SHA,
	}
	if s.baseShown != sourcespec.DefaultGitHubAPI {
		prov["api_base"] = s.baseShown
	}
	return Result{
		Content:     content,
		ContentType: contentType(s.path, content),
		Revision:    info.SHA + "@" + commit,
		Provenance:  prov,
	}, nil
}

func (s *githubSource) tokenAdvice() string {
	if s.spec.TokenEnv == "" {
		return "a private repository needs token_env naming an allowed variable that holds a token"
	}
	return "the token in " + s.spec.TokenEnv + " can read the repository"
}

// apiErr explains a GitHub error answer: rate limits with their reset
// time, rejected tokens, and anything else with GitHub's own message.
func (s *githubSource) apiErr(uri string, resp *response) error {
	msg := githubMessage(resp.body)
	if msg != "" {
		msg = ": " + msg
	}
	code := resp.status
	if code == http.StatusForbidden || code == http.StatusTooManyRequests {
		if resp.header.Get("X-RateLimit-Remaining") == "0" {
			when := "later"
			if secs, err := strconv.ParseInt(resp.header.Get("X-RateLimit-Reset"), 10, 64); err == nil {
				reset := time.Unix(secs, 0).UTC()
				when = "at " + reset.Format(time.RFC3339)
				if d := time.Until(reset).Round(time.Second); d > 0 {
					when += " (in " + d.String() + ")"
				}
			}
			advice := "set token_env to an allowed variable holding a GitHub token to get a higher limit"
			if s.spec.TokenEnv != "" {
				advice = "wait for the reset or use a token with a higher limit in " + s.spec.TokenEnv
			}
			return fail(uri, nil, nil, "GitHub API rate limit exhausted reading %s; it resets %s; %s", s.what(), when, advice)
		}
		if ra := resp.header.Get("Retry-After"); ra != "" {
			if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil {
				return fail(uri, nil, nil, "GitHub asked readproof to slow down reading %s (%s%s); retry after %d seconds", s.what(), statusText(code), msg, secs)
			}
		}
		if code == http.StatusTooManyRequests {
			return fail(uri, nil, nil, "GitHub answered %s for %s%s; retry later", statusText(code), s.what(), msg)
		}
		return fail(uri, nil, nil, "GitHub refused access to %s (%s%s); check that %s", s.what(), statusText(code), msg, s.tokenAdvice())
	}
	if code == http.StatusUnauthorized {
		if s.spec.TokenEnv != "" {
			return fail(uri, nil, nil, "GitHub rejected the token in %s (%s%s); renew the token", s.spec.TokenEnv, statusText(code), msg)
		}
		return fail(uri, nil, nil, "GitHub requires a token for %s (%s%s); set token_env to an allowed variable holding one", s.what(), statusText(code), msg)
	}
	return fail(uri, nil, nil, "GitHub answered %s for %s%s; check api_base or retry later", statusText(code), s.what(), msg)
}

// githubMessage extracts GitHub's "message" from an error body, cut to a
// printable line.
func githubMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) != nil {
		return ""
	}
	m := strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return -1
		}
		return r
	}, e.Message)
	if len(m) > 200 {
		m = m[:200] + "..."
	}
	return m
}

var hexID = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`) })

// parseCommitSHA reads the commit id from a commits answer: the bare id of
// the application/vnd.github.sha media type, or a JSON object's "sha" from
// a server that ignored it.
func parseCommitSHA(body []byte) (string, error) {
	t := strings.ToLower(strings.TrimSpace(string(body)))
	if hexID().MatchString(t) {
		return t, nil
	}
	var c struct {
		SHA string `json:"sha"`
	}
	if err := json.Unmarshal(body, &c); err == nil && hexID().MatchString(strings.ToLower(c.SHA)) {
		return strings.ToLower(c.SHA), nil
	}
	return "", errors.New("expected a 40- or 64-digit hex id")
}

// ghContent is the part of a contents answer readproof uses.
type ghContent struct {
	Type     string `json:"type"`
	Encoding string `json:"encoding"`
	Size     int64  `json:"size"`
	Content  string `json:"content"`
	SHA      string `json:"sha"`
	Path     string `json:"path"`
}

var errIsDir = errors.New("the path is a directory")

// parseContents decodes a contents answer. A JSON array is a directory
// listing.
func parseContents(body []byte) (ghContent, error) {
	var c ghContent
	t := bytes.TrimSpace(body)
	if len(t) > 0 && t[0] == '[' {
		return c, errIsDir
	}
	if err := json.Unmarshal(t, &c); err != nil {
		return c, fmt.Errorf("invalid JSON: %w", err)
	}
	if c.Type == "" {
		return c, errors.New("no type")
	}
	if c.Size < 0 {
		return c, errors.New("negative size")
	}
	if c.Type == "file" && !hexID().MatchString(c.SHA) {
		return c, errors.New("no blob id")
	}
	return c, nil
}

// blobMatches reports whether content hashes to the git blob id sha
// (SHA-1 or SHA-256 repositories).
func blobMatches(sha string, content []byte) bool {
	header := "blob " + strconv.Itoa(len(content)) + "\x00"
	switch len(sha) {
	case 40:
		h := sha1.New()
		h.Write([]byte(header))
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil)) == sha
	case 64:
		h := sha256.New()
		h.Write([]byte(header))
		h.Write(content)
		return hex.EncodeToString(h.Sum(nil)) == sha
	}
	return false
}
