package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/manifest"
)

// TestSourceFailsWithSnapshotRecorded: when the source cannot be read but a
// snapshot is recorded, neither require_fresh nor an expired allow_stale
// delivers it; the error keeps the source's cause and its hint says why the
// recorded snapshot was not used and how to read it deliberately.
func TestSourceFailsWithSnapshotRecorded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for _, c := range []struct {
		uri  string
		want []string
	}{
		{"readproof://web/fresh", []string{"require_fresh", "2026-11-29T12:00:00Z", "readproof tag set readproof://web/fresh TAG"}},
		{"readproof://web/stale", []string{"older than max_age 1h", "2026-11-29T12:00:00Z", "readproof tag set readproof://web/stale TAG"}},
	} {
		f, src := staleFixture(t)
		if _, err := f.s.Resolve(ctx, c.uri); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(2 * time.Hour)
		src.err = &adapters.Error{URI: c.uri, Err: context.DeadlineExceeded}
		_, err := f.s.Resolve(ctx, c.uri)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("%s: %v; want the source's error", c.uri, err)
		}
		h := hint.Of(err)
		for _, w := range c.want {
			if !strings.Contains(h, w) {
				t.Errorf("%s: source failed with a snapshot recorded:\nerror: %v\nhint:  %q\nwant the hint to say %q", c.uri, err, h, w)
			}
		}
		// what the hint offers works while the source is down: URI@TAG
		// reads no source
		u, _ := identity.ParseURI(c.uri)
		if _, err := f.s.SetTag(u, "kept", ""); err != nil {
			t.Fatal(err)
		}
		calls := src.calls
		if d, err := f.s.Resolve(ctx, c.uri+"@kept"); err != nil || d.Decision != manifest.DecisionUseTag || string(d.Content) != "v1\n" || src.calls != calls {
			t.Errorf("%s@kept with the source down: %v %+v (source read %d times)", c.uri, err, d, src.calls-calls)
		}
	}
	// no snapshot: nothing to say about one
	f, src := staleFixture(t)
	src.err = &adapters.Error{URI: "readproof://web/stale", Err: context.DeadlineExceeded}
	if _, err := f.s.Resolve(ctx, "readproof://web/stale"); err == nil || strings.Contains(hint.Of(err), "snapshot") {
		t.Errorf("source failed, nothing recorded: %v (hint %q)", err, hint.Of(err))
	}
}
