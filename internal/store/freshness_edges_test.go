package store

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/manifest"
)

const staleTOML = `
[[resource]]
uri = "readproof://web/fresh"
source = { type = "http", url = "https://example.com/fresh" }

[[resource]]
uri = "readproof://web/stale"
policy = "allow_stale"
max_age = "1h"
source = { type = "http", url = "https://example.com/stale" }
`

// staleFixture is a store over staleTOML whose sources answer what src says.
func staleFixture(t *testing.T) (*fixture, *scripted) {
	t.Helper()
	src := &scripted{next: adapters.Result{Content: []byte("v1\n"), ContentType: "text/plain"}}
	f := newFixture(t, staleTOML, nil)
	f.reopen(t, Options{OpenSource: func(adapters.Spec, adapters.Env) (adapters.Source, error) { return src, nil }})
	return f, src
}

// TestAllowStaleAtMaxAge pins the edge of allow_stale: a snapshot exactly
// max_age old is reused, one second older is read again; inspect says what
// get then does.
func TestAllowStaleAtMaxAge(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const uri = "readproof://web/stale"
	for _, c := range []struct {
		age  time.Duration
		want string
	}{
		{time.Hour - time.Second, manifest.DecisionUseCurrent},
		{time.Hour, manifest.DecisionUseCurrent},
		{time.Hour + time.Second, manifest.DecisionFetch},
	} {
		f, src := staleFixture(t)
		if _, err := f.s.Resolve(ctx, uri); err != nil {
			t.Fatal(err)
		}
		f.clock.Add(c.age)
		in, err := f.s.Inspect(uri)
		if err != nil {
			t.Fatal(err)
		}
		src.next.Content = []byte("v2\n")
		d, err := f.s.Resolve(ctx, uri)
		if err != nil {
			t.Fatal(err)
		}
		if d.Decision != c.want || in.Decision != c.want {
			t.Errorf("age %s: get decided %s, inspect %s (%s); want %s", c.age, d.Decision, in.Decision, in.Reason, c.want)
		}
	}
}

// TestAllowStaleClockBehind: a snapshot observed after the clock's time (the
// clock was set back, or the observation came by pull from a machine whose
// clock ran ahead) has no age to trust. Reusing it would serve it until the
// clock catches up plus max_age, however long that is: it is read again.
func TestAllowStaleClockBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const uri = "readproof://web/stale"
	f, src := staleFixture(t)
	if _, err := f.s.Resolve(ctx, uri); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(-24 * time.Hour)
	src.next.Content = []byte("v2\n")
	in, err := f.s.Inspect(uri)
	if err != nil {
		t.Fatal(err)
	}
	if in.Decision != manifest.DecisionFetch || !strings.Contains(in.Reason, "after") {
		t.Errorf("inspect with the clock 24h behind the snapshot: %s (%s); want fetch, saying the snapshot was observed after now", in.Decision, in.Reason)
	}
	d, err := f.s.Resolve(ctx, uri)
	if err != nil {
		t.Fatal(err)
	}
	if d.Decision != manifest.DecisionFetch || string(d.Content) != "v2\n" {
		t.Errorf("get with the clock 24h behind the snapshot: decision %s, %q; want fetch, v2", d.Decision, d.Content)
	}
	// the new observation is the current one: within max_age of this clock
	f.clock.Add(time.Minute)
	d, err = f.s.Resolve(ctx, uri)
	if err != nil || d.Decision != manifest.DecisionUseCurrent || string(d.Content) != "v2\n" {
		t.Errorf("a minute later: %v %+v", err, d)
	}
}

// TestInspectPinnedUnrecorded: inspect says what get would decide, so a
// pinned resource whose snapshot is not recorded for it (a typo, or another
// resource's snapshot) is not shown as use_pinned when get fails on it.
func TestInspectPinnedUnrecorded(t *testing.T) {
	t.Parallel()
	f, d := pinnedToAnother(t)
	_, gerr := f.s.Resolve(context.Background(), "readproof://demo/policies/pinned")
	in, err := f.s.Inspect("readproof://demo/policies/pinned")
	if err != nil {
		t.Fatal(err)
	}
	if gerr == nil || in.Decision == manifest.DecisionUsePinned || !strings.Contains(in.Reason, "not recorded") {
		t.Errorf("get: %v; inspect: decision %q (%s); want get to fail and inspect to say the pinned snapshot is not recorded", gerr, in.Decision, in.Reason)
	}
	// pinned to a snapshot recorded for it: use_pinned, as get decides
	f.write(t, "readproof.toml", `
[[resource]]
uri = "readproof://demo/policies/refunds"
policy = "pinned"
snapshot = "`+d.Snapshot+`"
source = { type = "filesystem", path = "policies/refunds.md" }
`)
	f.reopen(t, Options{})
	in, err = f.s.Inspect("readproof://demo/policies/refunds")
	if err != nil || in.Decision != manifest.DecisionUsePinned {
		t.Errorf("inspect of a pinned resource with its snapshot: %v %+v", err, in)
	}
	if got, err := f.s.Resolve(context.Background(), "readproof://demo/policies/refunds"); err != nil || got.Decision != manifest.DecisionUsePinned {
		t.Errorf("get of a pinned resource with its snapshot: %v %+v", err, got)
	}
}
