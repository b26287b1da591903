package adapters_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// A redirect whose URL holds the token the request carried, percent-encoded
// (as any server writes a '+', '/' or '=' of it in a query, or every byte
// escaped), is not recorded as final_url: only its scheme and host are.
// The plain form was already hidden; the decoded one must be too.
func TestHTTPFinalURLHidesEncodedSecret(t *testing.T) {
	const token = "tok+en/with=chars-5c1e0a9b"
	every := func(s string) string {
		var b strings.Builder
		for i := 0; i < len(s); i++ {
			fmt.Fprintf(&b, "%%%02X", s[i])
		}
		return b.String()
	}
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/query":
			http.Redirect(w, r, "/final?q="+url.QueryEscape(tok), http.StatusFound)
		case "/path":
			http.Redirect(w, r, "/final/"+every(tok)+"/doc", http.StatusFound)
		case "/badescape":
			http.Redirect(w, r, "/final?x=%zz&q="+url.QueryEscape(tok), http.StatusFound)
		case "/plain":
			http.Redirect(w, r, "/final?q=unrelated%2Bvalue", http.StatusFound)
		default:
			w.Write([]byte("the document"))
		}
	})
	env := adapters.Env{
		Network:   loopback,
		EnvAllow:  []string{"POLICY_TOKEN"},
		LookupEnv: func(string) (string, bool) { return token, true },
	}
	host := strings.TrimPrefix(srv.srv.URL, "http://")
	for _, p := range []string{"/query", "/path", "/badescape"} {
		spec := adapters.Spec{Type: "http", URL: srv.srv.URL + p, Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
		r, err := fetchSpec(t, spec, env)
		if err != nil || string(r.Content) != "the document" {
			t.Fatalf("%s: %q, %v", p, r.Content, err)
		}
		got := r.Provenance["final_url"]
		if got != "http://"+host+"/[REDACTED]" {
			t.Errorf("%s: final_url %q, want only the scheme and host", p, got)
		}
	}
	// A final URL without the token is recorded as it is.
	spec := adapters.Spec{Type: "http", URL: srv.srv.URL + "/plain", Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
	r, err := fetchSpec(t, spec, env)
	if err != nil || r.Provenance["final_url"] != srv.srv.URL+"/final?q=unrelated%2Bvalue" {
		t.Errorf("plain redirect: final_url %q, %v", r.Provenance["final_url"], err)
	}
}

// Nor is such a URL shown in an error: the last hop of too many redirects,
// the hops of a loop.
func TestHTTPRedirectErrorHidesEncodedSecret(t *testing.T) {
	const token = "tok+en/with=chars-5c1e0a9b"
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch {
		case r.URL.Path == "/loop":
			http.Redirect(w, r, "/loop?q="+url.QueryEscape(tok), http.StatusFound)
		case strings.HasPrefix(r.URL.Path, "/hop/"):
			http.Redirect(w, r, r.URL.Path+"x?q="+url.QueryEscape(tok), http.StatusFound)
		}
	})
	env := adapters.Env{
		Network:   loopback,
		EnvAllow:  []string{"POLICY_TOKEN"},
		LookupEnv: func(string) (string, bool) { return token, true },
	}
	for _, p := range []string{"/loop", "/hop/"} {
		spec := adapters.Spec{Type: "http", URL: srv.srv.URL + p, Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
		_, err := fetchSpec(t, spec, env)
		if err == nil {
			t.Fatalf("%s: no error", p)
		}
		if msg := err.Error(); strings.Contains(msg, url.QueryEscape(token)) || strings.Contains(msg, token) || !strings.Contains(msg, "[REDACTED]") || !strings.Contains(msg, "redirect") {
			t.Errorf("%s: %q", p, msg)
		}
	}
}
