package adapters_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// emptyTokenEnv allows POLICY_TOKEN and has it set, but empty: what a CI job
// sees of a secret it is not given (GitHub Actions expands a missing secret,
// as in a pull request from a fork, to "").
func emptyTokenEnv() adapters.Env {
	env := secretEnv(loopback)
	env.LookupEnv = func(name string) (string, bool) { return "", name == "POLICY_TOKEN" }
	return env
}

// TestEmptySecretRefused: a header's ${NAME} or a github token_env naming a
// variable that is set but empty is a configuration error that says so,
// before any request. Before session 23 the header went out as "Bearer "
// and the server's 401 came back as "check the credentials in the source's
// headers", or for github "GitHub rejected the token in POLICY_TOKEN ...;
// renew the token", of a token that was never there.
func TestEmptySecretRefused(t *testing.T) {
	srv := newRecorder(t, ok("x"))
	spec := adapters.Spec{Type: "http", URL: srv.srv.URL + "/doc", Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
	_, err := fetchSpec(t, spec, emptyTokenEnv())
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), "POLICY_TOKEN") || !strings.Contains(err.Error(), "empty") {
		t.Errorf("http header of an empty variable: %v; want a configuration error naming POLICY_TOKEN as empty", err)
	}
	if n := srv.n.Load(); n != 0 {
		t.Errorf("the server received %d requests", n)
	}

	g := newFakeGitHub(t, 1<<30)
	g.setToken(secretValue)
	g.commit(map[string][]byte{"a.md": []byte("a")})
	gspec := g.spec("a.md")
	gspec.TokenEnv = "POLICY_TOKEN"
	_, err = fetchSpec(t, gspec, emptyTokenEnv())
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), "POLICY_TOKEN") || !strings.Contains(err.Error(), "empty") || strings.Contains(err.Error(), "renew") {
		t.Errorf("github token_env of an empty variable: %v; want a configuration error naming POLICY_TOKEN as empty", err)
	}
	if len(g.auths) != 0 {
		t.Errorf("the server received %d requests", len(g.auths))
	}
}
