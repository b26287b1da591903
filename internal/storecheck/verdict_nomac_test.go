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

// TestVerifyVerdictWithoutMACNoKey: a verdict record that carries no MAC
// is reported by `readproof verify` whether or not the auditor holds a
// probe key. Before session 30 it was warned of only with a key: without
// one, verify said nothing of it, as if it were a record a key would
// check (rra's re-read; evidence verify already named it both ways).
func TestVerifyVerdictWithoutMACNoKey(t *testing.T) {
	t.Parallel()
	p := newProject(t, twoDocs, "")
	ctx := context.Background()
	if err := p.s.StartRun("run-p"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.MountWithPosition(ctx, "run-p", uriOf("policies/refunds.md"), func(d *store.Delivery) error {
		d.Probe = &manifest.Probe{Bucket: 1000, Length: 16, DeliveredHash: store.ContentHash([]byte("x")), DeliveredSize: 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.CommitRun("run-p"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.RecordVerdictsWithKey("run-p", probe.Keys{}, func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		e := m.Entries[0]
		return &store.VerdictRecord{Format: store.VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Check: 1,
			Entries: []store.VerdictEntry{{Position: 0, URI: e.URI, Session: "run-p.0", Verdict: "HALLUCINATED", Reason: "test", Bucket: e.Probe.Bucket,
				AnswerSHA256: store.ContentHash([]byte("answer"))}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	for _, opts := range []storecheck.Options{{ProbeKeys: &keys}, {}} {
		rep := p.check(t, opts)
		if len(find(rep, storecheck.Warning, "1 verdict record carries no MAC")) != 1 {
			t.Errorf("with key %v: want the record without a MAC named, got:\n%s", opts.ProbeKeys != nil, problems(rep))
		}
	}
}
