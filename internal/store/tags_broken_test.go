package store

import (
	"context"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
)

// TestBrokenTagNamed: a manifest commit planted under a tag ref (issue 12.3's
// forgery) makes tag list, tag, tag history and tag set fail with an error
// that names the tag and a hint, not a bare "tag commit <id>: tag.json: not
// found".
func TestBrokenTagNamed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	ctx := context.Background()
	m, _, err := f.s.RunOnce(ctx, "r1", []string{"readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := identity.ParseURI("readproof://demo/policies/refunds")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetTag(u, "good", ""); err != nil {
		t.Fatal(err)
	}
	if err := f.s.Git().Update(gitstore.RefUpdate{Name: tagRef(u, "planted"), New: gitstore.OID(m.ID)}); err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() error{
		"Tags":       func() error { _, err := f.s.Tags(u); return err },
		"Tag":        func() error { _, err := f.s.Tag(u, "planted"); return err },
		"TagHistory": func() error { _, err := f.s.TagHistory(u, "planted"); return err },
		"SetTag":     func() error { _, err := f.s.SetTag(u, "planted", ""); return err },
	} {
		err := call()
		if err == nil {
			t.Errorf("%s on a planted tag: no error", name)
			continue
		}
		if !strings.Contains(err.Error(), "readproof://demo/policies/refunds@planted") {
			t.Errorf("%s: %v: want the tag named", name, err)
		}
		if !strings.Contains(hint.Of(err), "readproof verify") {
			t.Errorf("%s: hint %q: want one pointing at verify", name, hint.Of(err))
		}
	}
	if _, err := f.s.Tag(u, "good"); err != nil {
		t.Errorf("the intact tag: %v", err)
	}
}
