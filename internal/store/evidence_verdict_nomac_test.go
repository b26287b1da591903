package store

import (
	"strings"
	"testing"
)

// TestEvidenceVerdictWithoutMACNoKey (session 30's re-read): a verdict
// record that carries no MAC (a manifest mounted before verdict records
// were authenticated) is said to carry none whether or not the auditor
// holds a probe key. Without a key the check said "its MAC was not checked
// (no probe key)", as of a record a key would check, so evidence verify's
// success line told the auditor to get a key that checks nothing, not that
// the record has no MAC (docs/evidence.md lists that form of the line).
func TestEvidenceVerdictWithoutMACNoKey(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	m, _ := verifiedRun(t, f, "r", 1)
	_, data := exportStatement(t, f.s, m.ID, false)
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	c := checkNamed(rep, CheckProofOfRead)
	if err != nil || !rep.OK() || c == nil {
		t.Fatalf("verify: %v\n%s", err, rep.Listing())
	}
	if want := "; it carries no MAC (recorded before verdict records were authenticated)"; !strings.HasSuffix(c.Detail, want) {
		t.Errorf("proof_of_read without a probe key: %q, want it to end %q", c.Detail, want)
	}
	// the success line names it by this kind since session 31, not by
	// the detail's words (no other test had a store give it)
	if c.Kind != KindVerdictNoMAC {
		t.Errorf("proof_of_read of a record without a MAC: kind %q, want %q", c.Kind, KindVerdictNoMAC)
	}
}
