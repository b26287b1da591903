package store

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/manifest"
)

const refundsTOML = `
[[resource]]
uri = "readproof://demo/policies/refunds"
source = { type = "filesystem", path = "policies/refunds.md" }

[[resource]]
uri = "readproof://demo/policies/cached"
policy = "allow_stale"
max_age = "1h"
source = { type = "filesystem", path = "policies/cached.md" }
`

var v1 = "Products can be refunded within 30 days.\n"

func TestResolveDecisionsAndObservations(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "cached v1\n"})
	ctx := context.Background()

	d, err := f.s.Resolve(ctx, "readproof://demo/policies/refunds")
	if err != nil {
		t.Fatal(err)
	}
	if d.Decision != manifest.DecisionFetch || string(d.Content) != v1 {
		t.Fatalf("first resolve: %+v", d.Entry)
	}
	if d.ContentHash != "sha256:c8b0bb212e93151d720746e36ff3b7076727cb577614feafa0d61f168965aedb" {
		t.Fatalf("content hash %s", d.ContentHash)
	}
	// require_fresh records an observation every time, same snapshot
	f.clock.Add(time.Minute)
	d2, err := f.s.Resolve(ctx, "readproof://demo/policies/refunds")
	if err != nil {
		t.Fatal(err)
	}
	if d2.Snapshot != d.Snapshot || d2.Decision != manifest.DecisionFetch || !d2.ObservedAt.After(d.ObservedAt) {
		t.Fatalf("second resolve: %+v", d2.Entry)
	}
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")
	h, err := f.s.History(u)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 1 || h[0].Observations != 2 {
		t.Fatalf("history %+v", h)
	}

	// allow_stale reuses the current snapshot within max_age, refetches after
	c1, err := f.s.Resolve(ctx, "readproof://demo/policies/cached")
	if err != nil || c1.Decision != manifest.DecisionFetch {
		t.Fatalf("cached first: %v %+v", err, c1)
	}
	f.write(t, "policies/cached.md", "cached v2\n")
	f.clock.Add(59 * time.Minute)
	c2, err := f.s.Resolve(ctx, "readproof://demo/policies/cached")
	if err != nil || c2.Decision != manifest.DecisionUseCurrent || string(c2.Content) != "cached v1\n" {
		t.Fatalf("within max_age: %v %+v %q", err, c2.Entry, c2.Content)
	}
	f.clock.Add(2 * time.Minute)
	c3, err := f.s.Resolve(ctx, "readproof://demo/policies/cached")
	if err != nil || c3.Decision != manifest.DecisionFetch || string(c3.Content) != "cached v2\n" {
		t.Fatalf("after max_age: %v %+v", err, c3.Entry)
	}
}

// pinnedToAnother is a fixture whose readproof.toml pins
// readproof://demo/policies/pinned to the snapshot just recorded for
// readproof://demo/policies/refunds, which returns that resolution: a
// snapshot recorded, but not for the pinned resource.
func pinnedToAnother(t *testing.T) (*fixture, *Delivery) {
	t.Helper()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "x\n"})
	d, err := f.s.Resolve(context.Background(), "readproof://demo/policies/refunds")
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "readproof.toml", refundsTOML+`
[[resource]]
uri = "readproof://demo/policies/pinned"
policy = "pinned"
snapshot = "`+d.Snapshot+`"
source = { type = "filesystem", path = "policies/refunds.md" }
`)
	f.reopen(t, Options{})
	return f, d
}

func TestPinnedDeliversTheNamedSnapshot(t *testing.T) {
	t.Parallel()
	f, _ := pinnedToAnother(t)
	// the pinned resource has no history of its own: the snapshot must be
	// recorded for it, so this fails with a hint
	if _, err := f.s.Resolve(context.Background(), "readproof://demo/policies/pinned"); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("pinned without history: %v", err)
	}
}

func TestNotModifiedReusesCurrentSnapshot(t *testing.T) {
	t.Parallel()
	src := &scripted{next: adapters.Result{Content: []byte("v1\n"), ContentType: "text/plain", Revision: `"etag-1"`, ETag: `"etag-1"`}}
	f := newFixture(t, `
[[resource]]
uri = "readproof://web/doc"
source = { type = "http", url = "https://example.com/doc" }
`, nil)
	f.reopen(t, Options{OpenSource: func(adapters.Spec, adapters.Env) (adapters.Source, error) { return src, nil }})
	ctx := context.Background()
	d1, err := f.s.Resolve(ctx, "readproof://web/doc")
	if err != nil {
		t.Fatal(err)
	}
	src.next = adapters.Result{NotModified: true}
	f.clock.Add(time.Second)
	d2, err := f.s.Resolve(ctx, "readproof://web/doc")
	if err != nil {
		t.Fatal(err)
	}
	if src.last.Previous == nil || src.last.Previous.ETag != `"etag-1"` {
		t.Fatalf("conditional request not made: %+v", src.last.Previous)
	}
	if d2.Snapshot != d1.Snapshot || string(d2.Content) != "v1\n" || d2.SourceRevision != `"etag-1"` {
		t.Fatalf("304 delivery %+v", d2.Entry)
	}
	u, _ := identity.ParseURI("readproof://web/doc")
	h, _ := f.s.History(u)
	if len(h) != 1 || h[0].Observations != 2 {
		t.Fatalf("history after 304: %+v", h)
	}
	// a failing source records nothing
	src.err = errors.New("boom")
	before, _ := f.s.git.Ref(resourceRef(u))
	if _, err := f.s.Resolve(ctx, "readproof://web/doc"); err == nil {
		t.Fatal("want error")
	}
	after, _ := f.s.git.Ref(resourceRef(u))
	if before != after {
		t.Fatal("failed fetch moved the resource ref")
	}
}

func TestRunLifecycleAndReplay(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "c\n"})
	ctx := context.Background()
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	if err := f.s.StartRun("r1"); !errors.Is(err, ErrRunOpen) {
		t.Fatalf("second start: %v", err)
	}
	for i := 0; i < 3; i++ {
		d, err := f.s.Mount(ctx, "r1", "readproof://demo/policies/refunds")
		if err != nil {
			t.Fatal(err)
		}
		if d.Position != i {
			t.Fatalf("position %d, want %d", d.Position, i)
		}
	}
	m, err := f.s.CommitRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 3 || m.Entries[0].File != "content/demo/policies/refunds" || m.Entries[1].File != "content/demo/policies/refunds~1" {
		t.Fatalf("manifest entries %+v", m.Entries)
	}
	if _, err := f.s.CommitRun("r1"); !errors.Is(err, ErrRunCommitted) {
		t.Fatalf("commit twice: %v", err)
	}
	if _, err := f.s.Mount(ctx, "r1", "readproof://demo/policies/refunds"); !errors.Is(err, ErrRunCommitted) {
		t.Fatalf("mount into committed: %v", err)
	}
	if _, err := f.s.Mount(ctx, "nope", "readproof://demo/policies/refunds"); !errors.Is(err, ErrUnknownRun) {
		t.Fatalf("mount into unknown: %v", err)
	}
	res, err := f.s.Replay("r1")
	if err != nil || !res.AllMatch || res.Matched != 3 {
		t.Fatalf("replay: %v %+v", err, res)
	}
	// by manifest id too
	if _, err := f.s.Replay(m.ID); err != nil {
		t.Fatal(err)
	}
	// a tampered blob: write a blob under another id cannot be done through
	// the API, so point a copy of the manifest at a missing snapshot
	bad := *m
	bad.Entries = append([]manifest.Entry(nil), m.Entries...)
	bad.Entries[0].Snapshot = strings.Repeat("ab", 20)
	bad.RunID = "r-bad"
	id, err := f.s.writeManifest(&bad)
	if err == nil {
		res, err = f.s.Replay(string(id))
		if !errors.Is(err, ErrMismatch) || res.AllMatch || res.Entries[0].Error == "" {
			t.Fatalf("replay of a manifest with a missing blob: %v %+v", err, res)
		}
	} else if !errors.Is(err, gitstore.ErrNotFound) && !strings.Contains(err.Error(), "not found") && !strings.Contains(err.Error(), "missing") {
		t.Fatalf("write manifest with missing blob: %v", err)
	}
}

func TestTagsMoveRevertDelete(t *testing.T) {
	t.Parallel()
	f := newFixture(t, refundsTOML, map[string]string{"policies/refunds.md": v1, "policies/cached.md": "c\n"})
	ctx := context.Background()
	u, _ := identity.ParseURI("readproof://demo/policies/refunds")
	if _, err := f.s.SetTag(u, "prod", ""); !errors.Is(err, ErrNoSnapshot) {
		t.Fatalf("tag before any snapshot: %v", err)
	}
	d1, _ := f.s.Resolve(ctx, u.String())
	t1, err := f.s.SetTag(u, "prod", "")
	if err != nil || t1.Snapshot != d1.Snapshot {
		t.Fatalf("set: %v %+v", err, t1)
	}
	m1, _, err := f.s.RunOnce(ctx, "uses-prod", []string{u.String() + "@prod"})
	if err != nil {
		t.Fatal(err)
	}
	f.write(t, "policies/refunds.md", "v2\n")
	f.clock.Add(time.Minute)
	d2, _ := f.s.Resolve(ctx, u.String())
	if _, err := f.s.SetTag(u, "prod", d2.Snapshot[:8]); err != nil {
		t.Fatal(err)
	}
	got, err := f.s.Resolve(ctx, u.String()+"@prod")
	if err != nil || got.Snapshot != d2.Snapshot || got.Decision != manifest.DecisionUseTag || got.Ref != "prod" {
		t.Fatalf("after move: %v %+v", err, got)
	}
	// the committed manifest still replays the old bytes
	res, err := f.s.Replay(m1.ID)
	if err != nil || string(res.Entries[0].Content) != v1 {
		t.Fatalf("replay after tag move: %v", err)
	}
	if _, err := f.s.RevertTag(u, "prod"); err != nil {
		t.Fatal(err)
	}
	got, _ = f.s.Resolve(ctx, u.String()+"@prod")
	if got.Snapshot != d1.Snapshot {
		t.Fatal("revert did not move back")
	}
	if _, err := f.s.DeleteTag(u, "prod"); err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.Resolve(ctx, u.String()+"@prod"); !errors.Is(err, ErrUnknownTag) {
		t.Fatalf("deleted tag: %v", err)
	}
	hist, err := f.s.TagHistory(u, "prod")
	if err != nil || len(hist) != 4 || !hist[0].Deleted {
		t.Fatalf("history: %v %+v", err, hist)
	}
	if _, err := f.s.RevertTag(u, "prod"); err != nil {
		t.Fatal(err)
	}
	if got, err := f.s.Resolve(ctx, u.String()+"@prod"); err != nil || got.Snapshot != d1.Snapshot {
		t.Fatalf("revert of a deletion: %v", err)
	}
	fsckStore(t, f.s.Path())
}

func TestManyDocumentsOneTransaction(t *testing.T) {
	t.Parallel()
	toml, files, uris := manyDocs(50, 300)
	f := newFixture(t, toml, files)
	refs := append([]string{}, uris...)
	refs = append(refs, uris[0]) // the same resource twice in one run
	m, _, err := f.s.RunOnce(context.Background(), "big", refs)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Entries) != 51 {
		t.Fatalf("%d entries", len(m.Entries))
	}
	// the second read found the same snapshot and revision: the manifest
	// records it, the resource chain does not grow
	u, _ := identity.ParseURI(uris[0])
	h, _ := f.s.History(u)
	if len(h) != 1 || h[0].Observations != 1 {
		t.Fatalf("history of the doubly mounted resource: %+v", h)
	}
	if m.Entries[0].Snapshot != m.Entries[50].Snapshot || m.Entries[50].Decision != manifest.DecisionFetch {
		t.Fatalf("second mount: %+v", m.Entries[50])
	}
	// a changed document adds an observation even inside a run
	f.write(t, "docs/d00000.md", "changed\n")
	if _, _, err := f.s.RunOnce(context.Background(), "big2", uris[:1]); err != nil {
		t.Fatal(err)
	}
	if h, _ = f.s.History(u); len(h) != 2 {
		t.Fatalf("history after a change: %+v", h)
	}
	fsckStore(t, f.s.Path())
}

func fsckStore(t testing.TB, path string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		return
	}
	out, err := exec.Command("git", "--git-dir", path, "fsck", "--strict", "--no-dangling").CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "" {
		t.Fatalf("fsck: %v\n%s", err, out)
	}
}
