package storecheck_test

import (
	"context"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// TestVerifyStrippedPastOneRecord: a record without a MAC is broken when
// any older record of its chain has one (PROBE_PROTOCOL.md §10.6, as
// evidence verify and pull judge it), not only when the record just before
// it does: checks 2 and 3 appended without the key after keyed check 1 are
// both reported, with and without the key.
func TestVerifyStrippedPastOneRecord(t *testing.T) {
	t.Parallel()
	p := probedRun(t)
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []probe.Keys{keys, {}, {}} {
		recordVerdict(t, p, k)
	}
	for _, opts := range []storecheck.Options{{ProbeKeys: &keys}, {}} {
		rep := p.check(t, opts)
		for _, want := range []string{"check 2 carries no MAC although check 1 does", "check 3 carries no MAC although check 1 does"} {
			if len(find(rep, storecheck.Broken, want)) != 1 {
				t.Errorf("with key %v: want one broken %q, got:\n%s", opts.ProbeKeys != nil, want, problems(rep))
			}
		}
	}
}

// probedRun is a project with one committed run, "run-p", that delivered
// one probed document.
func probedRun(t testing.TB) *project {
	t.Helper()
	p := newProject(t, twoDocs, "")
	if err := p.s.StartRun("run-p"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.MountWithPosition(context.Background(), "run-p", uriOf("policies/refunds.md"), func(d *store.Delivery) error {
		d.Probe = &manifest.Probe{Bucket: 1000, Length: 16, DeliveredHash: store.ContentHash([]byte("x")), DeliveredSize: 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.CommitRun("run-p"); err != nil {
		t.Fatal(err)
	}
	return p
}

// recordVerdict appends to run-p's verdict chain the next check (check 1
// on an empty chain), recorded with k (no MAC when k is empty).
func recordVerdict(t testing.TB, p *project, k probe.Keys) {
	t.Helper()
	if _, err := p.s.RecordVerdictsWithKey("run-p", k, func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		e := m.Entries[0]
		r := &store.VerdictRecord{Format: store.VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Check: 1,
			Entries: []store.VerdictEntry{{Position: 0, URI: e.URI, Session: "run-p.0", Verdict: "HALLUCINATED", Reason: "test", Bucket: e.Probe.Bucket,
				AnswerSHA256: store.ContentHash([]byte("answer"))}}}
		if prev != nil {
			r.Check = prev.Check + 1
		}
		return r, nil
	}); err != nil {
		t.Fatal(err)
	}
}
