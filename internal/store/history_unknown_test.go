package store

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// TestHistoryUnknownNamesURI: history of a URI that is neither declared
// nor recorded names the URI and the policy file, as get does, instead of
// a bare "resource not registered".
func TestHistoryUnknownNamesURI(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "x\n"})
	u := identity.URI{Namespace: "demo", Path: "nosuch"}
	_, err := f.s.History(u)
	if !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("History(%s) = %v, want ErrNotRegistered", u, err)
	}
	if !strings.Contains(err.Error(), "readproof://demo/nosuch") || !strings.Contains(err.Error(), "readproof.toml") {
		t.Errorf("History: %v: want the URI and the policy file named", err)
	}
	if !strings.Contains(hint.Of(err), "readproof resource add readproof://demo/nosuch") {
		t.Errorf("History: hint %q", hint.Of(err))
	}
}
