package adapters_test

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
)

func ghEnv() adapters.Env {
	env := secretEnv(loopback)
	return env
}

func TestGitHubReadsAtResolvedCommit(t *testing.T) {
	g := newFakeGitHub(t, 1<<30)
	g.setToken(secretValue)
	g.commit(map[string][]byte{"policies/refunds.md": []byte("Products can be refunded within 30 days.\n")})
	spec := g.spec("policies/refunds.md")
	spec.TokenEnv = "POLICY_TOKEN"
	r, err := fetchSpec(t, spec, ghEnv())
	if err != nil {
		t.Fatal(err)
	}
	commit := g.commits[0].id
	blob := gitBlobID(r.Content)
	if r.Revision != blob+"@"+commit {
		t.Errorf("revision %q, want %s@%s", r.Revision, blob, commit)
	}
	if r.ContentType != "text/markdown" {
		t.Errorf("content type %q", r.ContentType)
	}
	want := map[string]string{"source_type": "github", "owner": "acme", "repo": "company-docs", "path": "policies/refunds.md", "ref": "main", "commit": commit, "blob": blob, "api_base": g.srv.URL}
	for k, v := range want {
		if r.Provenance[k] != v {
			t.Errorf("provenance[%s] = %q, want %q", k, r.Provenance[k], v)
		}
	}
	for _, a := range g.auths {
		if a != "Bearer "+secretValue {
			t.Errorf("request without the token: %q", a)
		}
	}
	noSecret(t, "github", r, err)
	if d := spec.Redacted().Describe(); !strings.HasPrefix(d, "acme/company-docs:policies/refunds.md@main via http://127.0.0.1:") {
		t.Errorf("Describe = %q", d)
	}

	// A pinned commit id as ref reads that commit, whatever main says now.
	g.commit(map[string][]byte{"policies/refunds.md": []byte("changed\n")})
	spec.Ref = commit
	r, err = fetchSpec(t, spec, ghEnv())
	if err != nil || string(r.Content) != "Products can be refunded within 30 days.\n" {
		t.Fatalf("pinned commit: %q, %v", r.Content, err)
	}
}

func TestGitHubTokenPolicy(t *testing.T) {
	g := newFakeGitHub(t, 1<<30)
	g.commit(map[string][]byte{"a.md": []byte("a")})
	spec := g.spec("a.md")
	spec.TokenEnv = "GITHUB_TOKEN"
	env := ghEnv() // allows POLICY_TOKEN only
	_, err := fetchSpec(t, spec, env)
	wantRefused(t, err, adapters.RuleEnvAllow)
	if len(g.auths) != 0 {
		t.Fatalf("the server received %d requests", len(g.auths))
	}
	env.EnvAllow = append(env.EnvAllow, "GITHUB_TOKEN")
	_, err = fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), "GITHUB_TOKEN") || !strings.Contains(err.Error(), "not set") {
		t.Errorf("unset token: %v", err)
	}
	if len(g.auths) != 0 {
		t.Fatalf("the server received %d requests", len(g.auths))
	}
	// A rejected token: the message names the variable, never the value.
	g.setToken("the-right-one")
	spec.TokenEnv = "POLICY_TOKEN"
	r, err := fetchSpec(t, spec, ghEnv())
	if err == nil || !strings.Contains(err.Error(), "POLICY_TOKEN") || !strings.Contains(err.Error(), "renew") {
		t.Errorf("bad token: %v", err)
	}
	noSecret(t, "401", r, err)
}

func TestGitHubErrors(t *testing.T) {
	g := newFakeGitHub(t, 1<<30)
	g.commit(map[string][]byte{"docs/a.md": []byte("a"), "docs/b.md": []byte("b")})
	env := ghEnv()

	spec := g.spec("docs/missing.md")
	_, err := fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrNotFound) || !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), "docs/missing.md") || !strings.Contains(err.Error(), "check path") {
		t.Errorf("missing path: %v", err)
	}
	spec = g.spec("docs/a.md")
	spec.Repo = "other"
	_, err = fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrNotFound) || !strings.Contains(err.Error(), "acme/other") || !strings.Contains(err.Error(), "token") {
		t.Errorf("missing repository: %v", err)
	}
	spec = g.spec("docs/a.md")
	spec.Ref = "no-such-branch"
	_, err = fetchSpec(t, spec, env)
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), `"no-such-branch"`) || !strings.Contains(err.Error(), uri) {
		t.Errorf("missing ref: %v", err)
	}
	_, err = fetchSpec(t, g.spec("docs"), env)
	wantRefused(t, err, adapters.RuleRegular)

	// Rate limits: when the limit resets and what to do.
	reset := time.Now().Add(10 * time.Minute).Unix()
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
		ghError(w, http.StatusForbidden, "API rate limit exceeded for 127.0.0.1.")
		return true
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	resetText := time.Unix(reset, 0).UTC().Format(time.RFC3339)
	if err == nil || !strings.Contains(err.Error(), "rate limit") || !strings.Contains(err.Error(), resetText) || !strings.Contains(err.Error(), "token_env") {
		t.Errorf("rate limit: %v", err)
	}
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		w.Header().Set("Retry-After", "30")
		ghError(w, http.StatusTooManyRequests, "You have exceeded a secondary rate limit.")
		return true
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	if err == nil || !strings.Contains(err.Error(), "retry after 30 seconds") || !strings.Contains(err.Error(), "secondary rate limit") {
		t.Errorf("secondary rate limit: %v", err)
	}
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		ghError(w, http.StatusForbidden, "Resource not accessible by integration")
		return true
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	if err == nil || !strings.Contains(err.Error(), "Resource not accessible") || !strings.Contains(err.Error(), "token_env") {
		t.Errorf("forbidden: %v", err)
	}
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		w.WriteHeader(http.StatusBadGateway)
		return true
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	if err == nil || !strings.Contains(err.Error(), "502 Bad Gateway") {
		t.Errorf("502: %v", err)
	}

	// Content that does not hash to the blob id GitHub claims.
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/contents/") {
			w.Write([]byte(`{"type":"file","encoding":"base64","size":3,"content":"YWJj","sha":"` + gitBlobID([]byte("xyz")) + `"}`))
			return true
		}
		return false
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	if err == nil || !strings.Contains(err.Error(), "does not match its blob id") {
		t.Errorf("blob mismatch: %v", err)
	}
	// A size over the limit is refused before any content is decoded.
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		if strings.Contains(r.URL.Path, "/contents/") {
			w.Write([]byte(`{"type":"file","encoding":"none","size":5000000000,"content":"","sha":"` + gitBlobID(nil) + `"}`))
			return true
		}
		return false
	})
	_, err = fetchSpec(t, g.spec("docs/a.md"), env)
	if !errors.Is(err, adapters.ErrTooLarge) || !strings.Contains(err.Error(), "5000000000 bytes") {
		t.Errorf("declared size: %v", err)
	}
	g.setOverride(nil)

	// The API base follows the address policy like any URL.
	_, err = fetchSpec(t, g.spec("docs/a.md"), adapters.Env{})
	wantRefused(t, err, adapters.RuleLoopback)
	spec = g.spec("docs/a.md")
	spec.APIBase = "file:///etc"
	if err := adapters.Check(spec, adapters.Env{}); !errors.Is(err, adapters.ErrRefused) {
		t.Errorf("file api_base: %v", err)
	}
}

func TestGitHubSpecValidation(t *testing.T) {
	bad := []adapters.Spec{
		{Type: "github", Owner: "", Repo: "r", Path: "p"},
		{Type: "github", Owner: "o/x", Repo: "r", Path: "p"},
		{Type: "github", Owner: "o", Repo: "..", Path: "p"},
		{Type: "github", Owner: "o", Repo: "r", Path: ""},
		{Type: "github", Owner: "o", Repo: "r", Path: "a/../b"},
		{Type: "github", Owner: "o", Repo: "r", Path: "p", Ref: "a b"},
		{Type: "github", Owner: "o", Repo: "r", Path: "p", Ref: "x..y"},
		{Type: "github", Owner: "o", Repo: "r", Path: "p", TokenEnv: "NOT-A-NAME"},
		{Type: "github", Owner: "o", Repo: "r", Path: "p", APIBase: "https://user:pw@ghe.example/api/v3"},
	}
	for _, s := range bad {
		if err := adapters.Check(s, adapters.Env{}); !errors.Is(err, adapters.ErrConfig) {
			t.Errorf("Check(%+v) = %v, want a configuration error", s, err)
		}
	}
	good := adapters.Spec{Type: "github", Owner: "acme", Repo: "company-docs", Path: "policies/refunds.md", Ref: "release/1.0"}
	if err := adapters.Check(good, adapters.Env{}); err != nil {
		t.Errorf("Check(good) = %v", err)
	}
}

func TestGitHubRefWithSlash(t *testing.T) {
	g := newFakeGitHub(t, 1<<30)
	g.commit(map[string][]byte{"a.md": []byte("a")})
	var paths []string
	g.setOverride(func(w http.ResponseWriter, r *http.Request) bool {
		paths = append(paths, r.URL.EscapedPath()+"?"+r.URL.RawQuery)
		if strings.HasSuffix(r.URL.Path, "/commits/release/1.0") {
			w.Write([]byte(g.commits[0].id))
			return true
		}
		return false
	})
	spec := g.spec("a.md")
	spec.Ref = "release/1.0"
	if _, err := fetchSpec(t, spec, ghEnv()); err != nil {
		t.Fatal(err)
	}
	if len(paths) != 2 || paths[0] != "/repos/acme/company-docs/commits/release/1.0?" || paths[1] != "/repos/acme/company-docs/contents/a.md?ref="+g.commits[0].id {
		t.Errorf("requests %q", paths)
	}
}
