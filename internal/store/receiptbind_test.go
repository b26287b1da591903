package store

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// receiptSummary is the receipt summary of the bundle export writes for
// target, and the receipts check its verification reports.
func receiptSummary(t *testing.T, s *Store, key receipts.Key, target string) (receipts.EvidenceSummary, *struct {
	OK     bool
	Detail string
}) {
	t.Helper()
	data, _, err := s.ExportEvidence(target, EvidenceOptions{ExporterVersion: "test"})
	if err != nil {
		t.Fatalf("export %s: %v", target, err)
	}
	var b struct {
		Predicate struct {
			Receipts receipts.EvidenceSummary `json:"receipts"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(data, &b); err != nil {
		t.Fatal(err)
	}
	rep, err := s.VerifyEvidence(data, EvidenceVerifyOptions{ReceiptsKey: &key})
	if err != nil {
		t.Fatal(err)
	}
	c := checkNamed(rep, CheckReceipts)
	if c == nil {
		t.Fatalf("%s: no receipts check\n%s", target, rep.Listing())
	}
	return b.Predicate.Receipts, &struct {
		OK     bool
		Detail string
	}{c.OK, c.Detail}
}

func testReceiptKey(t *testing.T) receipts.Key {
	t.Helper()
	key, err := receipts.NewKey(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func issueFor(t *testing.T, l *receipts.Ledger, key receipts.Key, run, tool string) receipts.Receipt {
	t.Helper()
	r, err := receipts.NewIssuer(key, l).Issue(context.Background(), receipts.Call{Session: "s1", Run: run, Tool: tool,
		Args: receipts.ArgvArgs([]string{tool}), Result: receipts.BytesResult([]byte("ok"))})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestUnboundReceiptsAsBefore: receipts appended as a readproof before
// bindings appends them (no trailer on their commits) are the run's, as
// they were: the summary of its one manifest holds every one, in the same
// order as RunReceipts, and verifies.
func TestUnboundReceiptsAsBefore(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	key := testReceiptKey(t)
	old := receipts.NewLedger(f.s.Git()) // no Bind: the old form
	for _, tool := range []string{"a", "b", "c"} {
		issueFor(t, old, key, "run-a", tool)
	}
	issueFor(t, old, key, "run-b", "other")
	tip, err := f.s.Git().Ref(receipts.SessionRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.s.Git().Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(c.Message, "run-") {
		t.Fatalf("an unbound append commit carries a binding:\n%s", c.Message)
	}
	rs, err := f.s.RunReceipts("run-a")
	if err != nil {
		t.Fatal(err)
	}
	want := receipts.Summary(rs)
	got, check := receiptSummary(t, f.s, key, "run-a")
	if got.Count != 3 || got.Digest != want.Digest || !slices.Equal(got.IDs, want.IDs) {
		t.Fatalf("summary %+v, want %+v", got, want)
	}
	if !check.OK || check.Detail != "3 receipts match the store, MACs verified with key "+key.ID() {
		t.Fatalf("receipts check %+v", check)
	}
}

// TestReceiptBindings: a receipt issued through the store's ledger for an
// open run is bound to its start, for a committed run to its manifest; the
// manifest's summary holds those and the unbound ones of its run id, never
// one bound to another manifest of the id or to another start of it (what
// another store's receipts of a run conflict are).
func TestReceiptBindings(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	key := testReceiptKey(t)
	if err := f.s.StartRun("r1"); err != nil {
		t.Fatal(err)
	}
	open := issueFor(t, f.s.Receipts(), key, "r1", "while-open")
	if _, err := f.s.Mount(context.Background(), "r1", "readproof://demo/policies/refunds"); err != nil {
		t.Fatal(err)
	}
	m, err := f.s.CommitRun("r1")
	if err != nil {
		t.Fatal(err)
	}
	after := issueFor(t, f.s.Receipts(), key, "r1", "after-commit")
	unbound := issueFor(t, receipts.NewLedger(f.s.Git()), key, "r1", "unbound")
	elsewhere := receipts.NewLedger(f.s.Git())
	elsewhere.Bind = func(string) receipts.Binding {
		return receipts.Binding{RunStarted: m.StartedAt.Add(time.Nanosecond)}
	}
	issueFor(t, elsewhere, key, "r1", "other-start")
	elsewhere.Bind = func(string) receipts.Binding {
		return receipts.Binding{Manifest: strings.Repeat("ab", 20)}
	}
	issueFor(t, elsewhere, key, "r1", "other-manifest")

	entries, err := f.s.Receipts().Scan("s1")
	if err != nil {
		t.Fatal(err)
	}
	bound := map[string]receipts.Binding{}
	for _, e := range entries {
		bound[e.ID] = e.Binding
	}
	if b := bound[open.ID]; b.Manifest != "" || !b.RunStarted.Equal(m.StartedAt) {
		t.Fatalf("receipt issued while r1 was open: binding %+v, want its start %v", b, m.StartedAt)
	}
	if b := bound[after.ID]; b.Manifest != m.ID {
		t.Fatalf("receipt issued after r1 was committed: binding %+v, want manifest %s", b, m.ID)
	}
	if b := bound[unbound.ID]; !b.IsZero() {
		t.Fatalf("unbound receipt: binding %+v", b)
	}
	got, check := receiptSummary(t, f.s, key, "r1")
	if want := []string{open.ID, after.ID, unbound.ID}; !slices.Equal(got.IDs, want) {
		t.Fatalf("summary ids %v, want %v (tools %v)", got.IDs, want, got.Tools)
	}
	if !check.OK {
		t.Fatalf("receipts check %+v", check)
	}
}

// breakReceipt adds a member to receipt id in session's chain, as git
// plumbing would, in a commit of its own on top: the receipt no longer
// decodes, and the commit that appended it keeps its binding.
func breakReceipt(t *testing.T, f *fixture, session, id string) {
	t.Helper()
	g := f.s.Git()
	tip, err := g.Ref(receipts.SessionRef(session))
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	d := strings.TrimPrefix(id, receipts.IDPrefix)
	path := d[0:1] + "/" + d[1:2] + "/" + id + ".json"
	files := map[string]gitstore.OID{}
	if err := f.s.listFiles(c.Tree, "", files); err != nil {
		t.Fatal(err)
	}
	data, err := g.Blob(files[path])
	if err != nil {
		t.Fatal(err)
	}
	if files[path], err = g.PutBlob(bytes.Replace(data, []byte("{"), []byte(`{"unknown_member": 1, `), 1)); err != nil {
		t.Fatal(err)
	}
	tree, err := f.s.putTree(files)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: c.Author, Committer: c.Committer, Message: "edited\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef(session), Old: tip, New: nc}); err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableReceiptOfOtherManifest: a receipt of the run id that no
// longer decodes fails the receipts check of the manifest it was issued
// for, not of another manifest of the id.
func TestUnreadableReceiptOfOtherManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "r1", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	key := testReceiptKey(t)
	mine := issueFor(t, f.s.Receipts(), key, "r1", "mine")
	elsewhere := receipts.NewLedger(f.s.Git())
	elsewhere.Bind = func(string) receipts.Binding { return receipts.Binding{Manifest: strings.Repeat("ab", 20)} }
	theirs := issueFor(t, elsewhere, key, "r1", "theirs")
	breakReceipt(t, f, "s1", theirs.ID)
	got, check := receiptSummary(t, f.s, key, "r1")
	if !check.OK || !slices.Equal(got.IDs, []string{mine.ID}) {
		t.Fatalf("another manifest's unreadable receipt: summary %v, check %+v", got.IDs, check)
	}
	breakReceipt(t, f, "s1", mine.ID)
	if _, check := receiptSummary(t, f.s, key, "r1"); check.OK || !strings.Contains(check.Detail, mine.ID) || strings.Contains(check.Detail, theirs.ID) {
		t.Fatalf("its own receipt unreadable: check %+v, want a failure naming %s alone", check, mine.ID)
	}
}

// TestUnreadableReceiptBoundToManifest: an unreadable receipt whose run
// reads as another id (the name a rename gave the run where it was
// issued) but whose binding names the manifest is reported against that
// manifest too.
func TestUnreadableReceiptBoundToManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "r1", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	m, err := f.s.Manifest("r1")
	if err != nil {
		t.Fatal(err)
	}
	renamed := receipts.NewLedger(f.s.Git())
	renamed.Bind = func(string) receipts.Binding { return receipts.Binding{Manifest: m.ID} }
	r := issueFor(t, renamed, testReceiptKey(t), "r0", "renamed")
	breakReceipt(t, f, "s1", r.ID)
	_, bad, err := f.s.ManifestReceiptsChecked(m)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || bad[0].ID != r.ID {
		t.Fatalf("unreadable receipts %v, want %s, which is bound to manifest %s", bad, r.ID, m.ID)
	}
}
