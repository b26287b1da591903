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

// TestTagHistoryOfAnotherResourceRefused: the same copied ref, the other
// tag's chain two moves long. tag history would list the other resource's
// moves as URI@TAG's, and tag revert would write a move of URI@TAG onto
// the other resource's chain recording the other resource's snapshot and
// observation (a record a pull elsewhere refuses): both say the tag is
// damaged instead, and write nothing.
func TestTagHistoryOfAnotherResourceRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "cached\n"})
	ctx := context.Background()
	both := []string{"readproof://demo/policies/refunds", "readproof://demo/policies/cached"}
	if _, _, err := f.s.RunOnce(ctx, "r0", both); err != nil {
		t.Fatal(err)
	}
	// the victim is cached@prod; the chain copied onto it is refunds@rel,
	// two moves to two snapshots (refunds is read afresh on every run)
	a, _ := identity.ParseURI("readproof://demo/policies/cached")
	b, _ := identity.ParseURI("readproof://demo/policies/refunds")
	if _, err := f.s.SetTag(b, "rel", ""); err != nil {
		t.Fatal(err)
	}
	f.write(t, "policies/refunds.md", "Products can be refunded within 14 days.\n")
	if _, _, err := f.s.RunOnce(ctx, "r1", both); err != nil {
		t.Fatal(err)
	}
	tb, err := f.s.SetTag(b, "rel", "")
	if err != nil {
		t.Fatal(err)
	}
	if h, err := f.s.TagHistory(b, "rel"); err != nil || len(h) != 2 {
		t.Fatalf("refunds@rel: %d moves, %v; want 2", len(h), err)
	}
	if err := f.s.Git().Update(gitstore.RefUpdate{Name: tagRef(a, "prod"), New: gitstore.OID(tb.Commit)}); err != nil {
		t.Fatal(err)
	}
	damaged := func(what string, err error) {
		t.Helper()
		if !strings.Contains(err.Error(), "readproof://demo/policies/cached@prod") || !strings.Contains(hint.Of(err), "readproof verify") {
			t.Errorf("%s: %v (hint %q): want the tag named and a hint pointing at verify", what, err, hint.Of(err))
		}
	}
	if h, err := f.s.TagHistory(a, "prod"); err == nil {
		t.Errorf("TagHistory of readproof://demo/policies/cached@prod, whose chain is readproof://demo/policies/refunds@rel's: %d moves, no error", len(h))
	} else {
		damaged("TagHistory", err)
	}
	if st, err := f.s.RevertTag(a, "prod"); err == nil {
		t.Errorf("RevertTag of readproof://demo/policies/cached@prod, whose chain is readproof://demo/policies/refunds@rel's: reverted to %s (observation of %s), no error", st.Snapshot, st.Observation.URI)
	} else {
		damaged("RevertTag", err)
	}
	if tip, err := f.s.Git().Ref(tagRef(a, "prod")); err != nil || tip != gitstore.OID(tb.Commit) {
		t.Errorf("the damaged ref moved to %s (%v): want it left at %s", tip, err, tb.Commit)
	}
	if h, err := f.s.TagHistory(b, "rel"); err != nil || len(h) != 2 {
		t.Errorf("the tag in its place: %d moves, %v", len(h), err)
	}
}

// TestTagNameDifferingOnlyInCaseRefused: a tag's ref ends in its name, so
// prod and Prod of one resource are one file on the case-insensitive file
// systems of macOS and Windows (as two URIs differing only in case are,
// which readproof.toml refuses): there, setting Prod would move prod's
// ref with a move of Prod, which get then refuses as a damaged tag. A new
// tag whose name differs from a tag of the resource only in letter case is
// refused, naming that tag, and nothing moves.
func TestTagNameDifferingOnlyInCaseRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1})
	if _, _, err := f.s.RunOnce(context.Background(), "r0", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	a, _ := identity.ParseURI("readproof://demo/policies/refunds")
	prod, err := f.s.SetTag(a, "prod", "")
	if err != nil {
		t.Fatal(err)
	}
	for name, call := range map[string]func() (*TagState, error){
		"SetTag Prod":        func() (*TagState, error) { return f.s.SetTag(a, "Prod", "") },
		"PromoteTag to PROD": func() (*TagState, error) { return f.s.PromoteTag(a, "prod", "PROD") },
	} {
		if st, err := call(); err == nil {
			t.Errorf("%s beside prod: set %s@%s, no error", name, st.URI, st.Tag)
		} else if !strings.Contains(err.Error(), "differs only in letter case from readproof://demo/policies/refunds@prod") {
			t.Errorf("%s beside prod: %v; want the refusal naming prod", name, err)
		}
	}
	tags, err := f.s.Tags(a)
	if err != nil || len(tags) != 1 || tags[0].Commit != prod.Commit {
		t.Errorf("tags after the refusals: %+v, %v; want prod alone, unmoved", tags, err)
	}
	if _, err := f.s.SetTag(a, "prod", ""); err != nil {
		t.Errorf("moving prod itself: %v", err)
	}
}
