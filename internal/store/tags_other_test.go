package store

import (
	"context"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// TestTagOfAnotherResourceRefused: a tag ref of one resource whose record is
// a move of another resource's tag (a ref copied or pulled into the wrong
// place) does not deliver the other resource's snapshot as URI@TAG, nor put
// the other URI into a run's manifest: it is a damaged tag, named, with the
// hint that points at verify.
func TestTagOfAnotherResourceRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "cached\n"})
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "r0", []string{"readproof://demo/policies/refunds", "readproof://demo/policies/cached"}); err != nil {
		t.Fatal(err)
	}
	a, _ := identity.ParseURI("readproof://demo/policies/refunds")
	b, _ := identity.ParseURI("readproof://demo/policies/cached")
	tb, err := f.s.SetTag(b, "rel", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.s.Git().Update(gitstore.RefUpdate{Name: tagRef(a, "prod"), New: gitstore.OID(tb.Commit)}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Resolve": func() error { _, err := f.s.Resolve(ctx, "readproof://demo/policies/refunds@prod"); return err },
		"RunOnce": func() error {
			_, _, err := f.s.RunOnce(ctx, "r1", []string{"readproof://demo/policies/refunds@prod"})
			return err
		},
		"Tag":  func() error { _, err := f.s.Tag(a, "prod"); return err },
		"Tags": func() error { _, err := f.s.Tags(a); return err },
	} {
		err := call()
		if err == nil {
			t.Errorf("%s of readproof://demo/policies/refunds@prod, whose record is a move of readproof://demo/policies/cached@rel: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "readproof://demo/policies/refunds@prod") || !strings.Contains(hint.Of(err), "readproof verify") {
			t.Errorf("%s: %v (hint %q): want the tag named and a hint pointing at verify", name, err, hint.Of(err))
		}
	}
	if _, err := f.s.Tag(b, "rel"); err != nil {
		t.Errorf("the tag in its place: %v", err)
	}
}
