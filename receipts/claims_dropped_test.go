package receipts

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// dropReceipt commits, on session's chain, a tree without receipt id, as
// a hand with git would: a later commit that removes it from the chain.
func dropReceipt(t *testing.T, f *fixture, session, id string) {
	t.Helper()
	gitDir := f.store.Path()
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index"), "GIT_WORK_TREE=" + t.TempDir()}
	ref := SessionRef(session)
	old := git(t, gitDir, env, "rev-parse", ref)
	git(t, gitDir, env, "read-tree", old)
	git(t, gitDir, env, "update-index", "--force-remove", sessionBlobPath(id))
	tree := git(t, gitDir, env, "write-tree")
	commit := git(t, gitDir, env, "commit-tree", tree, "-p", old, "-m", "tidy")
	git(t, gitDir, env, "update-ref", ref, commit, old)
}

// TestDroppedReceiptTamperedInBothViews: a receipt its session's chain
// appended and a later commit removed is tampered for the operator's
// VerifyClaims and for its caller's view alike (before session 30 the
// first found it through the index and said valid, the second said
// fabricated); another caller's view answers it as absent, and the
// receipts the chain still holds are judged as before.
func TestDroppedReceiptTamperedInBothViews(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	seal := func(caller, tool string) Receipt {
		t.Helper()
		r, err := f.issuer.Seal(Call{Session: "s", Caller: caller, Tool: tool, Args: ArgvArgs([]string{tool}), Result: BytesResult([]byte(tool))})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ledger.Append(r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	gone := seal("bob", "gone")
	kept := seal("bob", "kept")
	seal("carol", "other")
	dropReceipt(t, f, "s", gone.ID)

	claims := []string{gone.ID, kept.ID}
	op, err := VerifyClaims(f.ledger, f.key, "s", claims)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := VerifyCallerClaims(f.ledger, f.key, "s", claims, "bob", "absent")
	if err != nil {
		t.Fatal(err)
	}
	carol, err := VerifyCallerClaims(f.ledger, f.key, "s", claims, "carol", "absent")
	if err != nil {
		t.Fatal(err)
	}
	for name, rep := range map[string]Report{"operator": op, "bob": bob} {
		if c := rep.Claims[0]; c.Verdict != Tampered || !strings.Contains(c.Detail, "removed from the chain") || !strings.Contains(c.Detail, gone.ID) {
			t.Errorf("%s: dropped receipt %s: %s", name, c.Verdict, c.Detail)
		}
		if c := rep.Claims[1]; c.Verdict != Valid {
			t.Errorf("%s: kept receipt %s: %s", name, c.Verdict, c.Detail)
		}
		for _, o := range rep.Omitted {
			if o.ID == gone.ID {
				t.Errorf("%s: the dropped receipt is listed as omitted", name)
			}
		}
	}
	if op.Claims[0].Detail != bob.Claims[0].Detail {
		t.Errorf("the views' details differ:\n%s\n%s", op.Claims[0].Detail, bob.Claims[0].Detail)
	}
	for _, c := range carol.Claims {
		if c.Verdict != Fabricated || c.Detail != "absent" {
			t.Errorf("carol's view of bob's %s: %s %s", c.ID, c.Verdict, c.Detail)
		}
	}
	// Listed and exported as before: the session's chain holds two.
	if entries, err := f.ledger.Scan("s"); err != nil || len(entries) != 2 {
		t.Errorf("Scan = %d entries, %v", len(entries), err)
	}
}

// TestDroppedUndecodableReceiptIsItsCallers: a receipt that its append
// commit stored as bytes that do not decode, but still name its caller,
// and that a later commit removed from the chain, is its caller's in a
// read token's view, read from that commit, and judged tampered as the
// operator's VerifyClaims judges it, the detail naming both faults;
// another caller's view answers it as absent.
func TestDroppedUndecodableReceiptIsItsCallers(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	var last Receipt
	for _, caller := range []string{"carol", "bob"} {
		r, err := f.issuer.Seal(Call{Session: "s", Caller: caller, Tool: "t", Args: ArgvArgs([]string{"t"}), Result: BytesResult([]byte("t"))})
		if err != nil {
			t.Fatal(err)
		}
		if err := f.ledger.Append(r); err != nil {
			t.Fatal(err)
		}
		last = r
	}
	// the append commit of bob's receipt, made again with bytes that name
	// bob but do not decode as a receipt, then a commit that removes it
	gitDir := f.store.Path()
	ref := SessionRef("s")
	tmp := filepath.Join(t.TempDir(), "blob")
	if err := os.WriteFile(tmp, []byte(`{"v":9,"caller":"bob"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"GIT_INDEX_FILE=" + filepath.Join(t.TempDir(), "index")}
	blob := git(t, gitDir, env, "hash-object", "-w", tmp)
	old := git(t, gitDir, env, "rev-parse", ref)
	msg := git(t, gitDir, env, "log", "-1", "--format=%B", old)
	git(t, gitDir, env, "read-tree", old)
	git(t, gitDir, env, "update-index", "--cacheinfo", "100644,"+blob+","+sessionBlobPath(last.ID))
	tree := git(t, gitDir, env, "write-tree")
	commit := git(t, gitDir, env, "commit-tree", tree, "-p", old+"^", "-m", msg)
	git(t, gitDir, env, "update-ref", ref, commit, old)
	dropReceipt(t, f, "s", last.ID)

	claims := []string{last.ID}
	op, err := VerifyClaims(f.ledger, f.key, "s", claims)
	if err != nil {
		t.Fatal(err)
	}
	bob, err := VerifyCallerClaims(f.ledger, f.key, "s", claims, "bob", "absent")
	if err != nil {
		t.Fatal(err)
	}
	carol, err := VerifyCallerClaims(f.ledger, f.key, "s", claims, "carol", "absent")
	if err != nil {
		t.Fatal(err)
	}
	if c := op.Claims[0]; c.Verdict != Tampered || !strings.Contains(c.Detail, "removed from the chain") || !strings.Contains(c.Detail, "format version 9") {
		t.Fatalf("operator: %s %s", c.Verdict, c.Detail)
	}
	if c := bob.Claims[0]; c.Verdict != Tampered || c.Detail != op.Claims[0].Detail {
		t.Errorf("bob's view of his dropped undecodable receipt: %s %s, want the operator's %s", c.Verdict, c.Detail, op.Claims[0].Detail)
	}
	if c := carol.Claims[0]; c.Verdict != Fabricated || c.Detail != "absent" {
		t.Errorf("carol's view of bob's dropped receipt: %s %s", c.Verdict, c.Detail)
	}
}
