package mcpserver

import (
	"errors"
	"testing"

	"github.com/readproof/readproof/internal/hint"
)

// TestErrorTextHidesBeforeEscaping (session 28, re-read): a failed call's
// text (errorText, which its receipt also records) hides the server's
// paths in the error as it was said, then escapes it: a path after a tab
// or a no-break space is hidden, and a store whose path holds a bidi
// character is <store>. Before, the text was escaped first: the tab became
// the two characters \t, a path after them was no word's start and was
// kept whole, and the store's escaped path was no longer the store's.
func TestErrorTextHidesBeforeEscaping(t *testing.T) {
	ps := serverPaths{{"/srv/st\u202eore", "<store>"}}
	clean := func(s string) string { return ps.hideOn(s, testLocal) }
	for _, c := range []struct {
		err  error
		want string
	}{
		{hint.With(errors.New("lock\t/srv/data/x.lock: exists"), "remove\u00a0/srv/data/x.lock"),
			`lock\tx.lock: exists` + "\nhint: " + `remove\u00a0x.lock`},
		{errors.New("open /srv/st\u202eore/refs/x.lock: exists"), "open <store>/refs/x.lock: exists"},
	} {
		if got := errorText(c.err, clean); got != c.want {
			t.Errorf("errorText(%q)\n got %q\nwant %q", c.err, got, c.want)
		}
	}
}
