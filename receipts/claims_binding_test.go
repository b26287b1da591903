package receipts

import (
	"errors"
	"strings"
	"testing"
)

// TestVerifyClaimsIndexBinding: a claim that the session's chain does not
// hold is read through the index chain; when that chain's append commit
// carries another binding line than the receipt's MAC covers, the claim is
// tampered, naming the receipt and its binding, as receipts show reports
// it, not other_session.
func TestVerifyClaimsIndexBinding(t *testing.T) {
	f := newFixture(t)
	r := issueBound(t, f, "s", Binding{Manifest: manifestA})
	f.issue(t, "other", "t") // the session checked has a chain
	claim := func() ClaimResult {
		t.Helper()
		rep, err := VerifyClaims(f.ledger, f.key, "other", []string{r.ID})
		if err != nil || len(rep.Claims) != 1 {
			t.Fatalf("VerifyClaims: %+v %v", rep, err)
		}
		return rep.Claims[0]
	}
	if c := claim(); c.Verdict != OtherSession {
		t.Fatalf("before the edit: %s (%s), want %s", c.Verdict, c.Detail, OtherSession)
	}
	rewriteAppend(t, f, indexRef(r.ID), "index receipt "+r.ID, func(m string) string { return strings.Replace(m, manifestA, manifestB, 1) })
	c := claim()
	if c.Verdict != Tampered || !strings.Contains(c.Detail, "tampered binding") || !strings.Contains(c.Detail, r.ID) || !strings.Contains(c.Detail, manifestB) {
		t.Fatalf("index chain's binding line edited: %s (%s), want %s naming the edited line", c.Verdict, c.Detail, Tampered)
	}
	if _, err := f.ledger.BindingOf(r); !errors.Is(err, ErrBindingEdited) {
		t.Fatalf("BindingOf: %v, want ErrBindingEdited (as receipts show reports it)", err)
	}
}
