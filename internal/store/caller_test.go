package store

import (
	"context"
	"testing"

	"github.com/readproof/readproof/identity"
)

// TestCallerRecorded: a handle with a caller records it in the manifests it
// commits (run commit and run --id) and the tag moves it makes; a handle
// without one records nothing, so existing records keep their bytes.
func TestCallerRecorded(t *testing.T) {
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": "v1\n", "policies/cached.md": "c\n"})
	ctx := context.Background()
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")

	m, _, err := f.s.RunOnce(ctx, "anon", []string{u.String()})
	if err != nil {
		t.Fatal(err)
	}
	if m.Caller != "" {
		t.Fatalf("caller %q without one set", m.Caller)
	}
	f.s.SetCaller("agent-7")
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Mount(ctx, "r1", u.String()); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.CommitRun("r1"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := f.s.RunOnce(ctx, "r2", []string{u.String()}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.SetTag(u, "prod", ""); err != nil {
		t.Fatal(err)
	}
	f.reopen(t, Options{})
	for _, id := range []string{"r1", "r2"} {
		got, err := f.s.Manifest(id)
		if err != nil {
			t.Fatal(err)
		}
		if got.Caller != "agent-7" {
			t.Errorf("manifest of %s: caller %q", id, got.Caller)
		}
	}
	if got, _ := f.s.Manifest("anon"); got.Caller != "" {
		t.Errorf("anonymous run: caller %q", got.Caller)
	}
	if _, err := f.s.DeleteTag(u, "prod"); err != nil {
		t.Fatal(err)
	}
	h, err := f.s.TagHistory(u, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Caller != "" || h[1].Caller != "agent-7" {
		t.Fatalf("tag history callers: %+v", h)
	}
}
