package adapters_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// A source whose request carries a secret (a header expanded from the
// environment, a GitHub token) is refused when its URL is plain http:// to
// another machine: every hop on the way could read the secret. Loopback
// (a tunnel, a local proxy), https, and a source with no secret are not.
func TestSecretOverPlainHTTPRefused(t *testing.T) {
	env := adapters.Env{EnvAllow: []string{"TOKEN"}, Network: loopback}
	secret := map[string]string{"Authorization": "Bearer ${TOKEN}"}
	github := func(base, tokenEnv string) adapters.Spec {
		return adapters.Spec{Type: "github", Owner: "acme", Repo: "docs", Path: "a.md", APIBase: base, TokenEnv: tokenEnv}
	}
	for _, c := range []struct {
		spec    adapters.Spec
		refused bool
	}{
		{adapters.Spec{Type: "http", URL: "http://docs.example.test/a.md", Headers: secret}, true},
		{adapters.Spec{Type: "http", URL: "HTTP://Docs.Example.Test:8080/a.md", Headers: secret}, true},
		{adapters.Spec{Type: "http", URL: "http://localhost.example.test/a.md", Headers: secret}, true},
		{adapters.Spec{Type: "http", URL: "https://docs.example.test/a.md", Headers: secret}, false},
		{adapters.Spec{Type: "http", URL: "http://127.0.0.1:8080/a.md", Headers: secret}, false},
		{adapters.Spec{Type: "http", URL: "http://localhost/a.md", Headers: secret}, false},
		{adapters.Spec{Type: "http", URL: "http://docs.example.test/a.md", PublicHeaders: map[string]string{"Accept": "text/markdown"}}, false},
		{github("http://ghe.example.test/api/v3", "TOKEN"), true},
		{github("https://ghe.example.test/api/v3", "TOKEN"), false},
		{github("http://ghe.example.test/api/v3", ""), false},
	} {
		err := adapters.Check(c.spec, env)
		if !c.refused {
			if errors.Is(err, adapters.ErrRefused) {
				t.Errorf("%+v: refused: %v", c.spec, err)
			}
			continue
		}
		if !errors.Is(err, adapters.ErrRefused) || !strings.Contains(err.Error(), adapters.RuleCleartext) || !strings.Contains(err.Error(), "use https://") {
			t.Errorf("%+v: Check = %v, want a refusal by %q with a hint", c.spec, err, adapters.RuleCleartext)
		}
	}
}
