package adapters_test

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// A redirect whose URL holds the token encoded twice (or more: a query
// value escaped again by a proxy, a path segment that itself holds an
// escaped URL) is hidden as the once-encoded one is: final_url keeps only
// the scheme and host.
func TestHTTPFinalURLHidesTwiceEncodedSecret(t *testing.T) {
	const token = "tok+en/with=chars x-5c1e0a9b"
	twice := func(s string) string { return url.QueryEscape(url.QueryEscape(s)) }
	srv := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		switch r.URL.Path {
		case "/twice":
			http.Redirect(w, r, "/final?q="+twice(tok), http.StatusFound)
		case "/thrice":
			http.Redirect(w, r, "/final/"+url.PathEscape(twice(tok)), http.StatusFound)
		case "/mixed":
			// the space written '+' in the inner query, that '+' then %2B
			http.Redirect(w, r, "/final?next="+url.PathEscape("/x?q="+url.QueryEscape(tok)), http.StatusFound)
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
	for _, p := range []string{"/twice", "/thrice", "/mixed"} {
		spec := adapters.Spec{Type: "http", URL: srv.srv.URL + p, Headers: map[string]string{"Authorization": "Bearer ${POLICY_TOKEN}"}}
		r, err := fetchSpec(t, spec, env)
		if err != nil || string(r.Content) != "the document" {
			t.Fatalf("%s: %q, %v", p, r.Content, err)
		}
		if got := r.Provenance["final_url"]; got != "http://"+host+"/[REDACTED]" {
			t.Errorf("%s: final_url %q, want only the scheme and host", p, got)
		}
	}
}
