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
