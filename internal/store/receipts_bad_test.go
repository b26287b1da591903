package store

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// TestUndecodableReceiptFailsOnlyItsRun (issue 13.3): a receipt edited with
// git plumbing to carry an unknown member does not decode. Export still
// works for every run; evidence verify of the run the receipt belongs to
// fails a check that names it, and the other run verifies.
func TestUndecodableReceiptFailsOnlyItsRun(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	for _, run := range []string{"run-a", "run-b"} {
		if _, _, err := f.s.RunOnce(context.Background(), run, []string{"readproof://demo/policies/refunds"}); err != nil {
			t.Fatal(err)
		}
	}
	key, err := receipts.NewKey(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	iss := receipts.NewIssuer(key, receipts.NewLedger(f.s.Git()))
	var bad receipts.Receipt
	for _, run := range []string{"run-a", "run-b"} {
		r, err := iss.Issue(context.Background(), receipts.Call{Session: "s1", Run: run, Tool: "exec",
			Args: receipts.ArgvArgs([]string{"true"}), Result: receipts.BytesResult([]byte("ok"))})
		if err != nil {
			t.Fatal(err)
		}
		bad = r
	}
	// Add a member to run-b's receipt in the session chain, as `git
	// hash-object` + `git mktree` + `git commit-tree` would.
	g := f.s.Git()
	tip, err := g.Ref(receipts.SessionRef("s1"))
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	d := strings.TrimPrefix(bad.ID, receipts.IDPrefix)
	path := d[0:1] + "/" + d[1:2] + "/" + bad.ID + ".json"
	old, err := gitstore.FileAt(g, c.Tree, path)
	if err != nil {
		t.Fatal(err)
	}
	data, err := g.Blob(old)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte("{"), []byte(`{"unknown_member": 1, `), 1)
	files := map[string]gitstore.OID{}
	if err := f.s.listFiles(c.Tree, "", files); err != nil {
		t.Fatal(err)
	}
	if files[path], err = g.PutBlob(edited); err != nil {
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
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s1"), Old: tip, New: nc}); err != nil {
		t.Fatal(err)
	}

	for _, tc := range []struct {
		run string
		ok  bool
	}{{"run-a", true}, {"run-b", false}} {
		data, _, err := f.s.ExportEvidence(tc.run, EvidenceOptions{ExporterVersion: "test"})
		if err != nil {
			t.Fatalf("export %s: %v", tc.run, err)
		}
		rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		c := checkNamed(rep, CheckReceipts)
		if c == nil || c.OK != tc.ok {
			t.Fatalf("%s: receipts check %+v, want ok=%v\n%s", tc.run, c, tc.ok, rep.Listing())
		}
		if !tc.ok && !strings.Contains(c.Detail, bad.ID) {
			t.Fatalf("%s: the failed check does not name receipt %s: %s", tc.run, bad.ID, c.Detail)
		}
	}
}
