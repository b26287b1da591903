package receipts

import (
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// TestV1NoRunReadersAgree: a version 1 receipt of no run has no binding,
// whatever its append commit says (a binding says which run of its run id
// the receipt was issued for; readproof writes no line for it), and a
// commit naming it that does not append it is reported: Scan (`receipts
// list`) and BindingOf (`receipts show`) say the same on the same chain.
// Before, Scan gave the append commit's line as its binding where BindingOf
// gave none, and BindingOf, returning early for a receipt of no run, did
// not report the commit Scan reported.
func TestV1NoRunReadersAgree(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	l := f.ledger
	r, err := f.issuer.Seal(Call{Session: "s", Tool: "x", Args: ArgvArgs([]string{"x"}), Result: BytesResult(nil)})
	if err != nil {
		t.Fatal(err)
	}
	r.Format, r.Bound = Version, Binding{}
	if r, err = f.key.Seal(r); err != nil {
		t.Fatal(err)
	}
	// appended by a hand that wrote a binding line on both append commits
	blob, err := f.store.PutBlob(r.Encode())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.tryAppend(r, Binding{Manifest: manifestA}, blob, SessionRef("s"), indexRef(r.ID)); err != nil {
		t.Fatal(err)
	}
	check := func(what string, tampered bool) {
		t.Helper()
		entries, err := l.Scan("s")
		if err != nil || len(entries) != 1 {
			t.Fatalf("%s: Scan = %+v, %v", what, entries, err)
		}
		e := entries[0]
		got, berr := l.BindingOf(r)
		if !e.Binding.IsZero() || !got.IsZero() {
			t.Errorf("%s: binding of a receipt of no run: list %+v, show %+v; want none for both", what, e.Binding, got)
		}
		if errors.Is(e.Err, ErrTampered) != tampered || errors.Is(berr, ErrTampered) != tampered {
			t.Errorf("%s: list says %v, show says %v; want tampered %v for both", what, e.Err, berr, tampered)
		}
		if tampered && (e.Err == nil || berr == nil || !strings.Contains(e.Err.Error(), "names it on its first line but its tree holds it with its parent's bytes") ||
			!strings.Contains(berr.Error(), "names it on its first line but its tree holds it with its parent's bytes")) {
			t.Errorf("%s: list says %v, show says %v; want both to name the commit that does not append it", what, e.Err, berr)
		}
	}
	check("append commits with a binding line", false)
	// then a commit on each chain naming it again, with the tip's tree
	for _, ref := range []string{SessionRef("s"), indexRef(r.ID)} {
		tip, err := l.ref(ref)
		if err != nil {
			t.Fatal(err)
		}
		tc, err := f.store.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		again := f.putCommit(t, tc.Tree, tc.Message, tip)
		if err := f.store.Update(gitobj.RefUpdate{Name: ref, Old: tip, New: again}); err != nil {
			t.Fatal(err)
		}
	}
	check("a commit naming it again", true)
}
