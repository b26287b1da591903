package adapters

import (
	"net/url"
	"testing"
)

// percentDecode agrees with net/url wherever net/url accepts the string,
// and never fails where it does not.
func FuzzPercentDecode(f *testing.F) {
	for _, s := range []string{"", "a%2Bb", "%zz%41", "100%", "%4", "a+b%20c", "%E2%82%AC", "%%41"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if want, err := url.PathUnescape(s); err == nil {
			if got := percentDecode(s, false); got != want {
				t.Errorf("percentDecode(%q, false) = %q, url.PathUnescape = %q", s, got, want)
			}
		}
		if want, err := url.QueryUnescape(s); err == nil {
			if got := percentDecode(s, true); got != want {
				t.Errorf("percentDecode(%q, true) = %q, url.QueryUnescape = %q", s, got, want)
			}
		}
	})
}

// A secret escaped any number of times up to maxDecodeRounds, each layer
// by query or path rules, is hidden by scrubber.url.
func FuzzScrubURLLayers(f *testing.F) {
	f.Add("tok+en/with=chars x", uint8(2), uint8(1))
	f.Add("%41bc", uint8(1), uint8(0))
	f.Add("a b+c", uint8(3), uint8(5))
	f.Fuzz(func(t *testing.T, secret string, layers, modes uint8) {
		if len(secret) < 3 {
			return
		}
		enc := secret
		for i := 0; i < int(layers)%(maxDecodeRounds+1); i++ {
			if modes>>i&1 == 1 {
				enc = url.PathEscape(enc)
			} else {
				enc = url.QueryEscape(enc)
			}
		}
		u := "https://h.example/p?q=" + enc
		got := newScrubber([]string{secret}).url(u)
		if got != "https://h.example/"+Redacted && got != Redacted {
			t.Errorf("secret %q in %d layers (modes %b): url(%q) = %q", secret, layers, modes, u, got)
		}
	})
}
