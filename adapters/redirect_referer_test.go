package adapters_test

import (
	"net/http"
	"testing"

	"github.com/readproof/readproof/adapters"
)

// A redirect carries no Referer: net/http would name the previous hop,
// query included, so a token in the declared URL (or in an earlier hop's)
// would reach the host the redirect leads to. A Referer the source declares
// is still sent.
func TestHTTPRedirectSendsNoReferer(t *testing.T) {
	other := newRecorder(t, ok("moved"))
	first := newRecorder(t, func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/same":
			http.Redirect(w, r, "/final?sig=hop-signature-0042", http.StatusFound)
		case "/final":
			http.Redirect(w, r, other.srv.URL+"/doc", http.StatusTemporaryRedirect)
		default:
			http.Redirect(w, r, other.srv.URL+"/doc", http.StatusFound)
		}
	})
	const token = "access_token=url-token-77e1c0"
	for _, path := range []string{"/doc?" + token, "/same?" + token} {
		r, err := fetchSpec(t, httpSpec(first.srv.URL+path), adapters.Env{Network: loopback})
		if err != nil || string(r.Content) != "moved" {
			t.Fatalf("%s: %q, %v", path, r.Content, err)
		}
	}
	for i, h := range append(first.headers, other.headers...) {
		if got := h.Get("Referer"); got != "" {
			t.Errorf("request %d carried Referer %q", i, got)
		}
	}
	// A declared Referer is the source's own: it follows the redirect.
	spec := httpSpec(first.srv.URL + "/doc")
	spec.PublicHeaders = map[string]string{"Referer": "https://docs.example/"}
	if _, err := fetchSpec(t, spec, adapters.Env{Network: loopback}); err != nil {
		t.Fatal(err)
	}
	if got := other.headers[len(other.headers)-1].Get("Referer"); got != "https://docs.example/" {
		t.Errorf("declared Referer not sent after the redirect: %q", got)
	}
}
