package storecheck_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/receipts"
)

// TestReceiptFileRemovedLater: a receipt chain commit in the middle of a
// session chain that adds a file (NOTES.md) the next commit removes is
// invisible at the tip, yet `git log -p` of the chain shows it: chains only
// grow, so verify reports the commit that drops it.
func TestReceiptFileRemovedLater(t *testing.T) {
	t.Parallel()
	p := newProject(t, twoDocs, "")
	key, err := receipts.NewKey(bytes.Repeat([]byte{5}, 32))
	if err != nil {
		t.Fatal(err)
	}
	g := p.s.Git()
	iss := receipts.NewIssuer(key, receipts.NewLedger(g))
	for i := 0; i < 2; i++ {
		if _, err := iss.Issue(context.Background(), receipts.Call{Session: "s1", Tool: "exec",
			Args: receipts.ArgvArgs([]string{"true", fmt.Sprint(i)}), Result: receipts.BytesResult([]byte("ok"))}); err != nil {
			t.Fatal(err)
		}
	}
	if rep := p.check(t, storecheck.Options{}); !rep.OK() {
		t.Fatalf("healthy store:\n%s", problems(rep))
	}
	ref := receipts.SessionRef("s1")
	tip, err := g.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	second, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.Commit(second.Parents[0])
	if err != nil {
		t.Fatal(err)
	}
	entries, err := g.Tree(first.Tree)
	if err != nil {
		t.Fatal(err)
	}
	notes, _ := g.PutBlob([]byte("Approved by legal.\n"))
	planted, err := g.PutTree(append(slices.Clone(entries), gitstore.TreeEntry{Name: "NOTES.md", Mode: gitstore.ModeFile, OID: notes}))
	if err != nil {
		t.Fatal(err)
	}
	mid, err := g.PutCommit(gitstore.Commit{Tree: planted, Parents: second.Parents, Author: second.Author, Committer: second.Committer, Message: "notes\n"})
	if err != nil {
		t.Fatal(err)
	}
	second.Parents = []gitstore.OID{mid}
	forged, err := g.PutCommit(second)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: forged}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if rep.Broken() == 0 || !strings.Contains(problems(rep), "NOTES.md") {
		t.Fatalf("a receipt chain whose middle commit adds NOTES.md, which the tip lacks:\n%s", problems(rep))
	}
}
