package share

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
)

// The ref-name parsers of this package read names a remote chose: anything
// they accept must round-trip to the same ref name.

func FuzzSplitConflict(f *testing.F) {
	f.Add("nightly/" + strings.Repeat("ab", 20))
	f.Add("a/b/" + strings.Repeat("0", 40))
	f.Add("/" + strings.Repeat("1", 40))
	f.Add("x/y")
	f.Fuzz(func(t *testing.T, s string) {
		run, mid, ok := splitConflict(s)
		if !ok {
			return
		}
		if run+"/"+mid != s || strings.Contains(run, "/") || len(mid) != 40 {
			t.Fatalf("splitConflict(%q) = %q, %q", s, run, mid)
		}
	})
}

func FuzzKeyURI(f *testing.F) {
	f.Add("demo/policies+refunds")
	f.Add("demo/a")
	f.Add("demo/a/b")
	f.Add("Demo/x")
	f.Add("demo/a++b")
	f.Fuzz(func(t *testing.T, key string) {
		u, err := keyURI(key)
		if err != nil {
			return
		}
		if u.Key() != key || u.Tag != "" {
			t.Fatalf("keyURI(%q) = %+v (key %q)", key, u, u.Key())
		}
	})
}

func FuzzSplitTagKey(f *testing.F) {
	f.Add("demo/policies+refunds/prod")
	f.Add("demo/a/..")
	f.Add("demo/a")
	f.Add("demo/a/b/c")
	f.Fuzz(func(t *testing.T, key string) {
		u, tag, err := splitTagKey(key)
		if err != nil {
			return
		}
		if tagKey(u, tag) != key {
			t.Fatalf("splitTagKey(%q) = %+v %q", key, u, tag)
		}
	})
}

// FuzzSplitProposalRef: a proposal ref the guard accepts names a valid tag
// of a valid URI, and reads back as the branch ProposalBranch makes.
func FuzzSplitProposalRef(f *testing.F) {
	for _, s := range []string{
		store.ProposalsPrefix + "demo/policy/prod/0123456789ab-on-ba9876543210",
		store.ProposalsPrefix + "demo/a+b/prod/x",
		store.ProposalsPrefix + "demo/policy/prod/",
		store.ProposalsPrefix + "demo/policy/prod",
		store.ProposalsPrefix + "../x/y/z",
		"refs/heads/readproof/tags/demo/policy/prod",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		u, tag, name, err := splitProposalRef(ref)
		if err != nil {
			return
		}
		if identity.ValidateTag(tag) != nil || identity.ValidateTag(name) != nil {
			t.Fatalf("%q: accepted tag %q, name %q", ref, tag, name)
		}
		if got := store.ProposalsPrefix + u.Key() + "/" + tag + "/" + name; got != ref {
			t.Fatalf("%q reads back as %q", ref, got)
		}
	})
}
