package store

import (
	"bytes"
	"context"
	"testing"

	"github.com/readproof/readproof/receipts"
)

// TestEvidenceAdditionsAmbiguous: a bundle's proof_of_read and receipts
// are held to the rule the rest of the bundle, verdicts.json and stored
// receipts follow: a member named in another case than the format spells
// it, or a member the format does not have, fails the store check instead
// of being verified as unchanged while jq shows another verdict or count.
func TestEvidenceAdditionsAmbiguous(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	m, _ := verifiedRun(t, f, "r", 1)
	key, err := receipts.NewKey(bytes.Repeat([]byte{7}, receipts.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	res := receipts.ExecResult{Start: f.clock.Now(), End: f.clock.Now()}
	if _, err := receipts.NewIssuer(key, receipts.NewLedger(f.s.Git())).Issue(context.Background(), receipts.CommandCall("s1", "r", []string{"true"}, res)); err != nil {
		t.Fatal(err)
	}
	_, data := exportStatement(t, f.s, m.ID, false)
	if rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify of the bundle as exported: %v\n%s", err, rep.Listing())
	}
	for _, c := range []struct{ name, check, old, new string }{
		// jq shows HALLUCINATED; encoding/json takes the last, which the store holds
		{"verdict in other case", CheckProofOfRead, `"verdict": "READ_VERIFIED"`, `"verdict": "HALLUCINATED", "Verdict": "READ_VERIFIED"`},
		{"member proof_of_read does not have", CheckProofOfRead, `"verdict": "READ_VERIFIED"`, `"verdict": "READ_VERIFIED", "note": "HALLUCINATED"`},
		// jq shows no receipts
		{"count in other case", CheckReceipts, `"count": 1`, `"count": 0, "Count": 1`},
	} {
		edited := bytes.Replace(data, []byte(c.old), []byte(c.new), 1)
		if bytes.Equal(edited, data) {
			t.Fatalf("%s: %s is not in the bundle", c.name, c.old)
		}
		rep, err := f.s.VerifyEvidence(edited, EvidenceVerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if ch := checkNamed(rep, c.check); ch == nil || ch.OK || rep.OK() {
			t.Errorf("%s: want %s to fail:\n%s", c.name, c.check, rep.Listing())
		}
	}
}
