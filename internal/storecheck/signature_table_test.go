package storecheck_test

import (
	"bytes"
	"crypto/ed25519"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestSignatureCasesAgree (issue 12.5): `verify` (storecheck) and `evidence
// verify` (store.VerifyEvidence) judge every signature case the same way;
// a signature that does not verify against its own key is broken even when
// no allowed_signers is configured.
func TestSignatureCasesAgree(t *testing.T) {
	t.Parallel()
	key, _ := evidence.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	stranger, _ := evidence.NewKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize)))
	cases := []struct {
		name   string
		signer *evidence.Key // nil: unsigned
		edit   bool          // the signed commit is changed after signing
		trust  bool          // allowed_signers (listing key) configured
		ok     bool
	}{
		{name: "unsigned", ok: true},
		{name: "unsigned+trust", trust: true, ok: true},
		{name: "good+trusted", signer: &key, trust: true, ok: true},
		{name: "good+untrusted", signer: &stranger, trust: true},
		{name: "good+no-allowed-signers", signer: &key, ok: true},
		{name: "bad+trusted-key", signer: &key, edit: true, trust: true},
		{name: "bad+no-allowed-signers", signer: &key, edit: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := newProject(t, twoDocs, "")
			writeFile(t, filepath.Join(p.dir, "allowed_signers"), key.AllowedSignersLine("team@example.com")+"\n")
			if tc.signer != nil {
				k := *tc.signer
				p.reopen(t, store.Options{SignCommit: func(payload []byte) (string, error) { return evidence.SignCommit(payload, k) }})
			}
			id := p.run(t, "r", uriOf("policies/refunds.md"))
			g := p.s.Git()
			if tc.edit {
				// Change the signed commit's message and keep its gpgsig
				// header: the signature no longer matches what it signs.
				c, err := g.Commit(gitstore.OID(id))
				if err != nil {
					t.Fatal(err)
				}
				c.Message = strings.Replace(c.Message, "1 entry", "1 entry (edited)", 1)
				edited, err := g.PutCommit(c)
				if err != nil {
					t.Fatal(err)
				}
				// Replace the run tag in place, as a forger with write access would.
				ref := filepath.Join(p.storePath(), "refs", "tags", "readproof", "runs", "r")
				if err := os.WriteFile(ref, []byte(string(edited)+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			var opts storecheck.Options
			var signers evidence.AllowedSigners
			if tc.trust {
				opts.AllowedSigners = filepath.Join(p.dir, "allowed_signers")
				signers, _ = evidence.ParseAllowedSigners([]byte(key.AllowedSignersLine("team@example.com")))
			}
			rep := p.check(t, opts)
			verifyOK := len(find(rep, storecheck.Broken, "run r", "signature")) == 0

			bundle, _, err := p.s.ExportEvidence("r", store.EvidenceOptions{ExporterVersion: "test"})
			if err != nil {
				t.Fatal(err)
			}
			erep, err := p.s.VerifyEvidence(bundle, store.EvidenceVerifyOptions{Signers: signers})
			if err != nil {
				t.Fatal(err)
			}
			evidenceOK := true
			for _, c := range erep.Checks {
				if c.Name == store.CheckCommitSignature && !c.OK {
					evidenceOK = false
				}
			}
			if verifyOK != tc.ok || evidenceOK != tc.ok {
				t.Fatalf("verify ok=%v, evidence verify ok=%v; want %v\nverify:\n%s\nevidence:\n%s", verifyOK, evidenceOK, tc.ok, problems(rep), erep.Listing())
			}
		})
	}
}
