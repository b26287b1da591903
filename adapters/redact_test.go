package adapters_test

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

func TestRedactedHeaders(t *testing.T) {
	spec := adapters.Spec{Type: "http", URL: "https://docs.example.com/p.md", Headers: map[string]string{
		"Authorization":   "Bearer ${POLICY_TOKEN}",
		"Cookie":          "session=abc",
		"X-Api-Key":       "${KEY}",
		"Private-Token":   "glpat-xxxxxxxxxxxxxxxxxxxx",
		"X-Trace":         "${TRACE_ID}",
		"Accept":          "text/markdown",
		"X-Forwarded":     "Bearer sk-live-12345",
		"X-Custom":        "ghp_abcdefghijklmnopqrstuvwxyz0123456789",
		"X-Opaque":        "a8f5f167f44f4964e6c998dee827110c3b6a",
		"X-Mixed":         "prefix-${TRACE_ID}",
		"X-Keep-Alive":    "timeout=5",
		"X-Request-Class": "batch 2024",
	}}
	r := spec.Redacted()
	for _, h := range []string{"Authorization", "Cookie", "X-Api-Key", "Private-Token", "X-Forwarded", "X-Custom", "X-Opaque"} {
		if r.Headers[h] != adapters.Redacted {
			t.Errorf("%s: %q not redacted", h, r.Headers[h])
		}
	}
	for _, h := range []string{"X-Trace", "Accept", "X-Mixed", "X-Keep-Alive", "X-Request-Class"} {
		if r.Headers[h] != spec.Headers[h] {
			t.Errorf("%s: %q became %q", h, spec.Headers[h], r.Headers[h])
		}
	}
	if spec.Headers["Authorization"] != "Bearer ${POLICY_TOKEN}" {
		t.Errorf("Redacted changed the original: %v", spec.Headers)
	}
}

func TestRedactedURLs(t *testing.T) {
	cases := map[string]string{
		"https://user:pw@example.com/a.md":                      "https://[REDACTED]@example.com/a.md",
		"https://ghp_token@github.com/o/r.git":                  "https://[REDACTED]@github.com/o/r.git",
		"https://example.com/a.md?access_token=abc&page=2":      "https://example.com/a.md?access_token=[REDACTED]&page=2",
		"https://example.com/a?X-Amz-Signature=ff&X-Amz-Date=1": "https://example.com/a?X-Amz-Signature=[REDACTED]&X-Amz-Date=1",
		"https://example.com/a.md":                              "https://example.com/a.md",
		"git@github.com:org/repo.git":                           "git@github.com:org/repo.git",
		"http://u:p@exa mple.com/":                              "http://[REDACTED]@exa mple.com/",
		"":                                                      "",
	}
	for in, want := range cases {
		got := adapters.Spec{Type: "http", URL: in}.Redacted().URL
		if got != want {
			t.Errorf("redact %q = %q, want %q", in, got, want)
		}
	}
	s := adapters.Spec{Type: "github", APIBase: "https://x:y@ghe.example/api/v3"}.Redacted()
	if strings.Contains(s.APIBase, "x:y") {
		t.Errorf("api_base %q", s.APIBase)
	}
}

func TestDescribe(t *testing.T) {
	cases := []struct {
		spec adapters.Spec
		want string
	}{
		{adapters.Spec{Type: "filesystem", Path: "/srv/policies/refunds.md"}, "/srv/policies/refunds.md"},
		{adapters.Spec{Type: "http", URL: "https://u:p@docs.example.com/refunds.md"}, "https://[REDACTED]@docs.example.com/refunds.md"},
		{adapters.Spec{Type: "github", Owner: "acme", Repo: "company-docs", Path: "policies/refunds.md"}, "acme/company-docs:policies/refunds.md@main"},
		{adapters.Spec{Type: "github", Owner: "acme", Repo: "company-docs", Path: "/policies/refunds.md", Ref: "v2", APIBase: "https://api.github.com/"}, "acme/company-docs:policies/refunds.md@v2"},
		{adapters.Spec{Type: "github", Owner: "acme", Repo: "docs", Path: "a.md", APIBase: "https://ghe.example/api/v3"}, "acme/docs:a.md@main via https://ghe.example/api/v3"},
		{adapters.Spec{Type: "git", URL: "https://git.example.com/docs.git", Path: "a.md"}, "https://git.example.com/docs.git:a.md@HEAD"},
		{adapters.Spec{Type: "git", URL: "ssh://git@host/docs.git", Path: "a.md", Ref: "v1"}, "ssh://[REDACTED]@host/docs.git:a.md@v1"},
		{adapters.Spec{Type: "s3", URL: "s3://bucket/key"}, "s3 s3://bucket/key"},
	}
	for _, c := range cases {
		if got := c.spec.Describe(); got != c.want {
			t.Errorf("Describe(%+v) = %q, want %q", c.spec, got, c.want)
		}
	}
}
