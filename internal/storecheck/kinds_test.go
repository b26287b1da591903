package storecheck_test

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
	"github.com/readproof/readproof/receipts"
)

// kindsProject is a store holding one record of every kind: an observation
// chain, a tag chain, a manifest (with a probed entry), the journal, a
// receipt session chain and index chain, and a verdict chain.
func kindsProject(t *testing.T) (*project, map[string]gitstore.OID, map[string]string) {
	p := newProject(t, twoDocs, "")
	refunds := uriOf("policies/refunds.md")
	p.run(t, "run-a", refunds)
	u := mustURI(t, refunds)
	if _, err := p.s.SetTag(u, "prod", p.snapshotOf(t, "run-a")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := p.s.StartRun("run-p"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.MountWithPosition(ctx, "run-p", refunds, func(d *store.Delivery) error {
		d.Probe = &manifest.Probe{Bucket: 1000, Length: 16, DeliveredHash: store.ContentHash([]byte("x")), DeliveredSize: 1}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	m, err := p.s.CommitRun("run-p")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.RecordVerdictsWithKey("run-p", keys, func(m *manifest.Manifest, prev *store.VerdictRecord) (*store.VerdictRecord, error) {
		e := m.Entries[0]
		return &store.VerdictRecord{Format: store.VerdictsFormat, RunID: m.RunID, ManifestID: m.ID, CheckedAt: time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC), Check: 1,
			Entries: []store.VerdictEntry{{Position: 0, URI: e.URI, Session: "run-p.0", Verdict: "HALLUCINATED", Reason: "test", Bucket: e.Probe.Bucket,
				AnswerSHA256: store.ContentHash([]byte("answer"))}}}, nil
	}); err != nil {
		t.Fatal(err)
	}
	key, err := receipts.NewKey(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipts.NewIssuer(key, receipts.NewLedger(p.s.Git())).Issue(ctx, receipts.Call{Session: "s1", Run: "run-a", Tool: "exec",
		Args: receipts.ArgvArgs([]string{"true"}), Result: receipts.BytesResult([]byte("ok"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.s.StartRun("run-x"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.Mount(ctx, "run-x", refunds); err != nil {
		t.Fatal(err)
	}
	if err := p.s.StartRun("run-o"); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.Mount(ctx, "run-o", refunds); err != nil {
		t.Fatal(err)
	}
	ab, err := p.s.AbortRun("run-x")
	if err != nil {
		t.Fatal(err)
	}
	g := p.s.Git()
	indexRef := receipts.IndexRefPrefix + r.ID[len(receipts.IDPrefix):len(receipts.IDPrefix)+1]
	// One ref of every namespace, and the commit of its own kind.
	refs := map[string]string{
		"observation": store.ResourcesPrefix + u.Key(),
		"tag move":    store.TagsPrefix + u.Key() + "/prod",
		"manifest":    store.RunsPrefix + "run-a",
		"journal":     store.JournalRef,
		"receipts":    receipts.SessionRef("s1"),
		"index":       indexRef,
		"verdicts":    store.VerdictsPrefix + "run-p",
		"open run":    store.OpenPrefix + "run-o",
		"aborted run": ab.Ref,
	}
	commits := map[string]gitstore.OID{}
	for kind, ref := range refs {
		id, err := g.Ref(ref)
		if err != nil {
			t.Fatalf("%s: %v", ref, err)
		}
		commits[kind] = id
	}
	_ = m
	return p, commits, refs
}

// TestEveryRefByItsKind (issue 12.3, verify side): a commit of another kind
// planted under any readproof namespace is reported as broken.
func TestEveryRefByItsKind(t *testing.T) {
	t.Parallel()
	p, commits, refs := kindsProject(t)
	if rep := p.check(t, storecheck.Options{}); !rep.OK() {
		t.Fatalf("healthy store:\n%s", problems(rep))
	}
	g := p.s.Git()
	for ns, ref := range refs {
		for kind, id := range commits {
			if kind == ns || (ns == "receipts" && kind == "index") || (ns == "index" && kind == "receipts") {
				continue // a receipt chain commit fits both receipt namespaces' shape
			}
			t.Run(fmt.Sprintf("%s under %s", kind, ns), func(t *testing.T) {
				own := commits[ns]
				if err := g.Update(gitstore.RefUpdate{Name: ref, Old: own, New: id}); err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := g.Update(gitstore.RefUpdate{Name: ref, Old: id, New: own}); err != nil {
						t.Fatal(err)
					}
				}()
				rep := p.check(t, storecheck.Options{})
				if rep.Broken() == 0 {
					t.Fatalf("a %s commit under %s passed:\n%s", kind, ref, problems(rep))
				}
			})
		}
	}
}
