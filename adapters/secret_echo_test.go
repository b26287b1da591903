package adapters_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// TestHTTPSecretEchoedInBody: a document that carries the value of a
// variable its request sent (a server that echoes its request headers, an
// answer that quotes the token) is refused: it would be recorded in the
// store, pushed with it and printed by get and replay. Before, its bytes
// were returned, secret included; only the validators were scrubbed.
func TestHTTPSecretEchoedInBody(t *testing.T) {
	t.Parallel()
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("You sent:\nAuthorization: " + r.Header.Get("Authorization") + "\nX-Key: " + r.Header.Get("X-Key") + "\n"))
	})
	for name, spec := range map[string]adapters.Spec{
		"whole value":   {Type: "http", URL: srv.srv.URL + "/echo", Headers: map[string]string{"X-Key": "${POLICY_TOKEN}"}},
		"inside a text": {Type: "http", URL: srv.srv.URL + "/echo", Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}},
	} {
		r, err := fetchSpec(t, spec, secretEnv(loopback))
		noSecret(t, name, r, err)
		var ae *adapters.Error
		if !errors.Is(err, adapters.ErrRefused) || !errors.As(err, &ae) || ae.Rule != adapters.RuleSecretInDocument {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(err.Error(), "POLICY_TOKEN") {
			t.Errorf("%s: the refusal does not name the variable: %v", name, err)
		}
	}
	// A document that holds no secret is read as before.
	r, err := fetchSpec(t, adapters.Spec{Type: "http", URL: srv.srv.URL + "/echo", PublicHeaders: map[string]string{"X-Key": "public"}}, secretEnv(loopback))
	if err != nil || !strings.Contains(string(r.Content), "X-Key: public") {
		t.Fatalf("public header echoed: %q, %v", r.Content, err)
	}
}

// TestGitHubTokenEchoedInContent: the github source refuses a file whose
// bytes hold its token, as the http source does.
func TestGitHubTokenEchoedInContent(t *testing.T) {
	g := newFakeGitHub(t, 1<<30)
	g.setToken(secretValue)
	g.commit(map[string][]byte{"policies/refunds.md": []byte("token: " + secretValue + "\n")})
	spec := g.spec("policies/refunds.md")
	spec.TokenEnv = "POLICY_TOKEN"
	r, err := fetchSpec(t, spec, ghEnv())
	noSecret(t, "github", r, err)
	var ae *adapters.Error
	if !errors.As(err, &ae) || ae.Rule != adapters.RuleSecretInDocument || !strings.Contains(err.Error(), "POLICY_TOKEN") {
		t.Fatalf("github: %v", err)
	}
}
