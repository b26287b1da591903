package commands

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/internal/store"
)

// TestVerifySummaryUnauthenticatedVerdicts (session 30, revreviewer): a
// verdict record of a manifest mounted before verdict records were
// authenticated carries no MAC and passes proof_of_read with the probe key
// at hand (internal/store's checkProofOfRead says so in its detail, which
// this test quotes). Nothing vouches for such a record, yet the success line
// said "evidence verified" and nothing of it, as it did of unchecked MACs
// before session 29. A store whose manifest predates the content binding
// cannot be made by this readproof, hence a unit test of the line.
func TestVerifySummaryUnauthenticatedVerdicts(t *testing.T) {
	rep := evidence.Report{Entries: 1, Root: strings.Repeat("a", 64), StoreChecked: true, StoreOK: 1, Checks: []evidence.Check{
		{Name: store.CheckProofOfRead, OK: true, Kind: store.KindVerdictNoMAC, Detail: "check 1 of run run-p (1 verdicts) is verdict record " + strings.Repeat("e", 40) + "; it carries no MAC (recorded before verdict records were authenticated)"},
	}}
	got := verifySummary(rep)
	if want := "evidence verified: 1 entry, merkle root aaaaaaaaaaaa…, replay match 1/1, proof-of-read verdicts carry no MAC (recorded before verdict records were authenticated)"; got != want {
		t.Errorf("success line:\n got %s\nwant %s", got, want)
	}
	// with a check made with probe check --at, the detail goes on
	rep.Checks[0].Detail += "; it judged the answer as of 2026-01-01T00:00:00Z, a time given with probe check --at, not read from the clock"
	if got := verifySummary(rep); !strings.HasSuffix(got, ", proof-of-read verdicts carry no MAC (recorded before verdict records were authenticated)") {
		t.Errorf("success line with clock_override: %s", got)
	}
	// a verified MAC adds nothing
	rep.Checks[0].Detail = "check 1 of run run-p (1 verdicts) is verdict record " + strings.Repeat("e", 40) + "; its MAC verifies under the probe key"
	rep.Checks[0].Kind = ""
	if got := verifySummary(rep); strings.Contains(got, "proof-of-read") {
		t.Errorf("success line of a verified MAC: %s", got)
	}
}

// TestVerifySummaryMatchesKinds (session 31, opsmall): the success line
// tells the passing checks that did not check all they could by their
// kinds, not by their details' words (before, a reworded detail would have
// dropped its clause from the line, in silence). Each kind with a detail
// that says none of the words matched before still gives its clause.
func TestVerifySummaryMatchesKinds(t *testing.T) {
	for _, c := range []struct {
		name, kind, detail, want string
	}{
		{store.CheckCommitSignature, store.KindSignerUnchecked, "signed by nobody checked", ", manifest commit signature valid (signer not checked: pass --trusted-keys)"},
		{store.CheckCommitSignature, "", "reworded: signer alice with SHA256:x", ", manifest commit reworded: signer alice with SHA256:x"},
		{store.CheckReceipts, store.KindReceiptMACsUnchecked, "reworded", ", tool receipts MACs not checked (no receipts key: READPROOF_RECEIPTS_KEY names the issuer's)"},
		{store.CheckReceipts, store.KindReceiptMACsOtherKey, "reworded", ", tool receipts MACs not checked (made under another key: READPROOF_RECEIPTS_KEY names the issuer's)"},
		{store.CheckReceipts, store.KindReceiptMACsPartly, "reworded", ", tool receipts MACs partly not checked (some made under another key: see --json)"},
		{store.CheckProofOfRead, store.KindVerdictMACUnchecked, "reworded", ", proof-of-read verdicts MAC not checked (no probe key)"},
		{store.CheckProofOfRead, store.KindVerdictMACOtherKey, "reworded", ", proof-of-read verdicts MAC not checked (another probe key)"},
		{store.CheckProofOfRead, store.KindVerdictNoMAC, "reworded", ", proof-of-read verdicts carry no MAC (recorded before verdict records were authenticated)"},
		// words that matched before, without the kind: nothing added
		{store.CheckReceipts, "", "1 receipts match the store (MACs not checked: no receipts key)", ""},
		{store.CheckProofOfRead, "", "check 1 is verdict record x; its MAC was not checked (no probe key)", ""},
	} {
		rep := evidence.Report{Entries: 1, Root: strings.Repeat("a", 64), StoreChecked: true, StoreOK: 1,
			Checks: []evidence.Check{{Name: c.name, OK: true, Kind: c.kind, Detail: c.detail}}}
		want := "evidence verified: 1 entry, merkle root aaaaaaaaaaaa…, replay match 1/1" + c.want
		if got := verifySummary(rep); got != want {
			t.Errorf("%s %q, detail %q:\n got %s\nwant %s", c.name, c.kind, c.detail, got, want)
		}
	}
}
