package store

import (
	"context"
	"encoding/json"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
)

func TestKeyURI(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"readproof://demo/a", "readproof://demo/policies/refunds", "readproof://n.s-1/a/b_c/d.e"} {
		u, _ := identity.ParseURI(s)
		got, err := KeyURI(u.Key())
		if err != nil || got != u {
			t.Errorf("KeyURI(%q) = %v, %v; want %v", u.Key(), got, err, u)
		}
	}
	for _, bad := range []string{"", "demo", "demo/", "/a", "demo/a/b", "Demo/a", "demo/a+", "demo/+a", "demo/a++b", "demo/a@t", "demo/..", "demo/a.lock"} {
		if u, err := KeyURI(bad); err == nil {
			t.Errorf("KeyURI(%q) accepted: %v", bad, u)
		}
	}
}

func FuzzKeyURI(f *testing.F) {
	for _, s := range []string{"demo/a", "demo/policies+refunds", "demo/a+b+c", "x/..", "a/b/c", "demo/a@b", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, key string) {
		u, err := KeyURI(key)
		if err != nil {
			if !errors.Is(err, identity.ErrInvalid) {
				t.Fatalf("%q: error %v does not wrap identity.ErrInvalid", key, err)
			}
			return
		}
		if u.Key() != key || u.Tag != "" {
			t.Fatalf("%q: round trip gave %q (tag %q)", key, u.Key(), u.Tag)
		}
		if back, err := identity.ParseURI(u.String()); err != nil || back != u {
			t.Fatalf("%q: %v does not parse back: %v", key, u, err)
		}
	})
}

func FuzzDecodeObservation(f *testing.F) {
	good, _ := json.Marshal(Observation{URI: "readproof://demo/a", Snapshot: strings.Repeat("a", 40), ContentHash: "sha256:" + strings.Repeat("0", 64), Bytes: 3})
	f.Add(good)
	f.Add([]byte(`{"uri": "readproof://demo/a", "snapshot": "x"}`))
	f.Add([]byte(`{`))
	tag, _ := json.Marshal(TagState{URI: "readproof://demo/a", Tag: "prod", Snapshot: strings.Repeat("b", 40), ContentHash: "sha256:" + strings.Repeat("1", 64)})
	f.Add(tag)
	f.Add([]byte(`{"uri": "readproof://demo/a", "tag": "prod", "deleted": true}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if o, err := DecodeObservation(data); err == nil {
			if !identity.IsObjectID(o.Snapshot) || o.Bytes < 0 || len(o.ContentHash) != 71 {
				t.Fatalf("accepted invalid observation %+v", o)
			}
			if _, err := identity.ParseURI(o.URI); err != nil {
				t.Fatalf("accepted uri %q", o.URI)
			}
		}
		if st, err := DecodeTagState(data); err == nil {
			if identity.ValidateTag(st.Tag) != nil {
				t.Fatalf("accepted tag %q", st.Tag)
			}
			if st.Deleted != (st.Snapshot == "") || (!st.Deleted && !identity.IsObjectID(st.Snapshot)) {
				t.Fatalf("accepted inconsistent tag state %+v", st)
			}
		}
	})
}

func TestBlobIDMatchesGit(t *testing.T) {
	t.Parallel()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	for _, data := range []string{"", "hello\n", strings.Repeat("x", 10000)} {
		cmd := exec.Command(git, "hash-object", "--stdin")
		cmd.Stdin = strings.NewReader(data)
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		if got := BlobID([]byte(data)); got != strings.TrimSpace(string(out)) {
			t.Errorf("BlobID of %d bytes = %s, git says %s", len(data), got, out)
		}
	}
}

// TestPeekRecordsNothing: Peek and Status read the source (conditionally)
// and leave every ref and object as they were.
func TestPeekRecordsNothing(t *testing.T) {
	t.Parallel()
	src := &scripted{next: adapters.Result{Content: []byte("v1\n"), ContentType: "text/plain", Revision: `"etag-1"`, ETag: `"etag-1"`}}
	f := newFixture(t, `
[[resource]]
uri = "readproof://web/doc"
source = { type = "http", url = "https://example.com/doc" }
`, nil)
	f.reopen(t, Options{OpenSource: func(adapters.Spec, adapters.Env) (adapters.Source, error) { return src, nil }})
	ctx := context.Background()
	u, _ := identity.ParseURI("readproof://web/doc")

	st, err := f.s.Status(ctx)
	if err != nil || len(st) != 1 || st[0].State != StatusNoSnapshot || !st[0].Drift || st[0].Source.Snapshot != BlobID([]byte("v1\n")) {
		t.Fatalf("status before any snapshot: %+v, %v", st, err)
	}
	d, err := f.s.Resolve(ctx, u.String())
	if err != nil {
		t.Fatal(err)
	}
	if d.Snapshot != BlobID([]byte("v1\n")) {
		t.Fatalf("BlobID %s differs from the snapshot id %s", BlobID([]byte("v1\n")), d.Snapshot)
	}
	if _, err := f.s.SetTag(u, "prod", ""); err != nil {
		t.Fatal(err)
	}
	refs := func() []gitstore.Ref {
		r, err := f.s.git.Refs("")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	before := refs()

	// 304: up to date, through a conditional request
	src.next = adapters.Result{NotModified: true}
	p, err := f.s.Peek(ctx, u)
	if err != nil || !p.NotModified || p.Snapshot != d.Snapshot || src.last.Previous == nil || src.last.Previous.ETag != `"etag-1"` {
		t.Fatalf("peek 304: %+v, %v (request %+v)", p, err, src.last.Previous)
	}
	// changed content: changed, the tag behind
	src.next = adapters.Result{Content: []byte("v2\n"), Revision: `"etag-2"`}
	st, err = f.s.Status(ctx)
	if err != nil || st[0].State != StatusChanged || !st[0].Drift || len(st[0].Tags) != 1 || !st[0].Tags[0].Behind {
		t.Fatalf("status after a change: %+v, %v", st, err)
	}
	if got := st[0].Describe(); got != "changed since snapshot "+d.Snapshot[:12] {
		t.Errorf("Describe() = %q", got)
	}
	// a failing source is a state, not an error of the call
	src.err = errors.New("connection refused")
	st, err = f.s.Status(ctx)
	if err != nil || st[0].State != StatusSourceError || st[0].Drift || !strings.Contains(st[0].Describe(), "connection refused") {
		t.Fatalf("status with a failing source: %+v, %v", st, err)
	}
	after := refs()
	if len(after) != len(before) {
		t.Fatalf("refs changed: %v -> %v", before, after)
	}
	for i := range after {
		if after[i] != before[i] {
			t.Fatalf("ref moved: %v -> %v", before[i], after[i])
		}
	}
	if h, _ := f.s.History(u); len(h) != 1 || h[0].Observations != 1 {
		t.Fatalf("status recorded observations: %+v", h)
	}
	// an undeclared resource
	if _, err := f.s.Peek(ctx, identity.URI{Namespace: "web", Path: "other"}); !errors.Is(err, ErrNotRegistered) {
		t.Fatalf("peek of an undeclared resource: %v", err)
	}
}
