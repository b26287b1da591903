package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/manifest"
)

// TestResolveStoredNeverFetches pins ResolveStored (a token of scope read
// over MCP) at the edges of the freshness policies: it delivers what
// Resolve would without reading the source (allow_stale up to max_age
// exactly, a tag), and where Resolve would read the source (require_fresh,
// allow_stale a second past max_age or before the first read) it fails
// with ErrWouldRecord, the source not contacted and no ref moved.
func TestResolveStoredNeverFetches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const fresh, stale = "readproof://web/fresh", "readproof://web/stale"
	f, src := staleFixture(t)
	uri := func(s string) identity.URI {
		t.Helper()
		u, err := identity.ParseURI(s)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	refs := func() string {
		t.Helper()
		var all string
		for _, u := range []string{fresh, stale} {
			tip, err := f.s.ref(resourceRef(uri(u)))
			if err != nil {
				t.Fatal(err)
			}
			all += u + " " + string(tip) + "\n"
		}
		return all
	}
	wouldRecord := func(uri string) {
		t.Helper()
		before, calls := refs(), src.calls
		_, err := f.s.ResolveStored(ctx, uri)
		if !errors.Is(err, ErrWouldRecord) {
			t.Errorf("%s: %v, want ErrWouldRecord", uri, err)
		}
		if src.calls != calls || refs() != before {
			t.Errorf("%s: the source was read (%d calls, %d before) or the store changed", uri, src.calls, calls)
		}
	}
	wouldRecord(stale) // nothing recorded yet
	wouldRecord(fresh)
	for _, u := range []string{fresh, stale} {
		if _, err := f.s.Resolve(ctx, u); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := f.s.SetTag(uri(fresh), "prod", ""); err != nil {
		t.Fatal(err)
	}
	calls := src.calls
	f.clock.Add(time.Hour)
	if d, err := f.s.ResolveStored(ctx, stale); err != nil || d.Decision != manifest.DecisionUseCurrent {
		t.Errorf("allow_stale at max_age: %v %v, want use_current", d, err)
	}
	if d, err := f.s.ResolveStored(ctx, fresh+"@prod"); err != nil || d.Decision != manifest.DecisionUseTag {
		t.Errorf("a tag: %v %v, want use_tag", d, err)
	}
	if src.calls != calls {
		t.Errorf("the source was read %d times", src.calls-calls)
	}
	wouldRecord(fresh)
	f.clock.Add(time.Second)
	wouldRecord(stale)
}
