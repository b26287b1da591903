package store

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"

	"github.com/readproof/readproof/evidence"
	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/receipts"
)

const evidenceToml = `[sources]
env = ["TOKEN"]

[[resource]]
uri = "readproof://demo/policies/refunds"
source = { type = "filesystem", path = "refunds.md" }
policy = "allow_stale"
max_age = "1h"

[[resource]]
uri = "readproof://demo/policies/returns"
source = { type = "http", url = "https://policies.example/returns", headers = { Authorization = "Bearer ${TOKEN}" } }
`

func newKey(t testing.TB) evidence.Key {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	k, err := evidence.NewKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func signWith(k evidence.Key) func([]byte) (string, error) {
	return func(p []byte) (string, error) { return evidence.SignCommit(p, k) }
}

func signers(t testing.TB, lines ...string) evidence.AllowedSigners {
	t.Helper()
	s, err := evidence.ParseAllowedSigners([]byte(strings.Join(lines, "\n")))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func exportStatement(t testing.TB, s *Store, target string, withContent bool) (*evidence.Statement, []byte) {
	t.Helper()
	data, st, err := s.ExportEvidence(target, EvidenceOptions{WithContent: withContent, ExporterVersion: "test"})
	if err != nil {
		t.Fatal(err)
	}
	return st, data
}

func checkNamed(rep evidence.Report, name string) *evidence.Check {
	for i := range rep.Checks {
		if rep.Checks[i].Name == name {
			return &rep.Checks[i]
		}
	}
	return nil
}

// TestEvidenceExportRoundTrip exports a run with content and verifies it
// against the store and offline; the seed's vector root comes out.
func TestEvidenceExportRoundTrip(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	m, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	st, data := exportStatement(t, f.s, "run-a", true)
	if got := st.Subject[0].Digest["sha256"]; got != "a9b73469f1a6e956024399ac407d174cc71e5d74a66e5ce390af3d64102821be" {
		t.Fatalf("root %s, want the published vector", got)
	}
	p := st.Predicate
	if p.ManifestID != m.ID || p.RunID != "run-a" || p.Exporter.Version != "test" || p.Git == nil || p.Git.RunRef != RunsPrefix+"run-a" || p.Git.ManifestSHA256 == "" {
		t.Fatalf("predicate %+v git %+v", p, p.Git)
	}
	if p.Git.CommitSigner != "" || p.Receipts != nil || p.ProofOfRead != nil {
		t.Fatalf("unsigned run without receipts or verdicts got additions: %+v %s %s", p.Git, p.Receipts, p.ProofOfRead)
	}
	if p.Replay == nil || !p.Replay.AllMatch || len(p.Replay.Entries) != 1 {
		t.Fatalf("replay %+v", p.Replay)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	if err != nil || !rep.OK() {
		t.Fatalf("verify: %v\n%s", err, rep.Listing())
	}
	if c := checkNamed(rep, CheckStoreManifest); c == nil || !c.OK {
		t.Fatalf("no passing store_manifest check:\n%s", rep.Listing())
	}
	if checkNamed(rep, CheckCommitSignature) != nil {
		t.Fatalf("an unsigned commit got a signature check:\n%s", rep.Listing())
	}
	if rep.StoreOK != 1 || rep.ContentOK != 1 {
		t.Fatalf("store ok %d content ok %d", rep.StoreOK, rep.ContentOK)
	}
	// by manifest id, the same statement apart from the generation times
	_, again := exportStatement(t, f.s, m.ID, true)
	strip := func(b []byte) string {
		var lines []string
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, `"generated_at"`) && !strings.Contains(l, `"verified_at"`) {
				lines = append(lines, l)
			}
		}
		return strings.Join(lines, "\n")
	}
	if strip(again) != strip(data) {
		t.Fatalf("two exports differ beyond generated_at/verified_at")
	}
}

// TestEvidenceResources: the definition in force when the entry was read
// (resource.json of the observation), not today's; redacted; missing when
// the resource is no longer declared.
func TestEvidenceResources(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	// the policy changes after the run
	changed := strings.Replace(evidenceToml, `policy = "allow_stale"`+"\nmax_age = \"1h\"", `policy = "require_fresh"`, 1)
	f.write(t, "readproof.toml", changed)
	f.reopen(t, Options{})
	st, _ := exportStatement(t, f.s, "run-a", false)
	rs := st.Predicate.Resources
	if len(rs) != 1 || rs[0].Missing || rs[0].Source == nil || rs[0].Policy == nil {
		t.Fatalf("resources %+v", rs)
	}
	if rs[0].Policy.Strategy != "allow_stale" || rs[0].Policy.MaxAgeSeconds != 3600 {
		t.Fatalf("policy %+v, want the allow_stale/3600 in force at the run", rs[0].Policy)
	}
	if rs[0].Source.Kind != "filesystem" {
		t.Fatalf("source %+v", rs[0].Source)
	}
	cfg, _ := rs[0].Source.Config["filesystem"].(map[string]any)
	if cfg["path"] != "refunds.md" {
		t.Fatalf("config %+v", rs[0].Source.Config)
	}
	// a later run reads under the new definition
	f.write(t, "refunds.md", "v2\n")
	f.clock.Add(time.Minute)
	if _, _, err := f.s.RunOnce(context.Background(), "run-b", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	st, _ = exportStatement(t, f.s, "run-b", false)
	if p := st.Predicate.Resources[0].Policy; p.Strategy != "require_fresh" {
		t.Fatalf("run-b policy %+v", p)
	}
	st, _ = exportStatement(t, f.s, "run-a", false)
	if p := st.Predicate.Resources[0].Policy; p.Strategy != "allow_stale" {
		t.Fatalf("run-a policy after run-b %+v", p)
	}
	// removed from the policy: missing, and the manifest still replays
	f.write(t, "readproof.toml", "")
	f.reopen(t, Options{})
	st, data := exportStatement(t, f.s, "run-a", true)
	if r := st.Predicate.Resources[0]; !r.Missing || r.Source != nil || r.Policy != nil {
		t.Fatalf("removed resource %+v", r)
	}
	if rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{}); err != nil || !rep.OK() {
		t.Fatalf("verify: %v\n%s", err, rep.Listing())
	}
}

// TestEvidenceResourceRedacted: a declared http resource's credentials never
// reach the bundle.
func TestEvidenceResourceRedacted(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	m := &manifest.Manifest{ID: "x", RunID: "r", Entries: []manifest.Entry{{URI: "readproof://demo/policies/returns"}}}
	rs, err := f.s.evidenceResources(m)
	if err != nil {
		t.Fatal(err)
	}
	st, err := evidence.Build(evidence.Input{ManifestID: "x", Resources: rs})
	if err != nil {
		t.Fatal(err)
	}
	out, err := evidence.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	for _, secret := range []string{"Bearer", "TOKEN"} {
		if bytes.Contains(out, []byte(secret)) {
			t.Fatalf("bundle carries %q:\n%s", secret, out)
		}
	}
	if !bytes.Contains(out, []byte(`"kind": "http"`)) || !bytes.Contains(out, []byte("policies.example/returns")) {
		t.Fatalf("http resource missing:\n%s", out)
	}
}

// TestReplayHashes: the Replayer re-hashes the store's bytes and refuses a
// run id in place of a manifest id.
func TestReplayHashes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	m, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds", "readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.s.ReplayHashes(m.ID)
	if err != nil || len(got) != 2 || got[1].Position != 1 || got[1].ContentHash != contentHash([]byte("v1\n")) || got[1].Err != nil {
		t.Fatalf("ReplayHashes = %+v, %v", got, err)
	}
	if _, err := f.s.ReplayHashes("run-a"); err == nil {
		t.Fatal("ReplayHashes accepted a run id")
	}
	if _, err := f.s.ReplayHashes(strings.Repeat("12", 20)); !errors.Is(err, ErrUnknownTarget) {
		t.Fatalf("unknown manifest: %v", err)
	}
	// a lost snapshot blob is an entry error, not a call error
	if err := gitstore.UnpackForTest(f.s.Path()); err != nil { // a small write makes a small pack
		t.Fatal(err)
	}
	blob := filepath.Join(f.s.Path(), "objects", m.Entries[0].Snapshot[:2], m.Entries[0].Snapshot[2:])
	if err := os.Remove(blob); err != nil {
		t.Fatal(err)
	}
	f.reopen(t, Options{})
	got, err = f.s.ReplayHashes(m.ID)
	if err != nil || len(got) != 2 || got[0].Err == nil || got[0].ContentHash != "" {
		t.Fatalf("after losing the blob: %+v, %v", got, err)
	}
	if _, _, err := f.s.ExportEvidence("run-a", EvidenceOptions{WithContent: true}); err == nil {
		t.Fatal("export --with-content succeeded without the bytes")
	}
	st, data := exportStatement(t, f.s, "run-a", false)
	if st.Predicate.Replay.AllMatch || st.Predicate.Replay.Entries[0].Error == "" {
		t.Fatalf("replay block %+v", st.Predicate.Replay)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	if err != nil || rep.OK() || checkNamed(rep, "store_replay[0]").OK || checkNamed(rep, "recorded_replay").OK {
		t.Fatalf("verify of a store that lost a blob: %v\n%s", err, rep.Listing())
	}
}

// TestVerifyManifestSignature: the same cases stock git verify-commit
// distinguishes (the CLI scripts run git itself on them).
func TestVerifyManifestSignature(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "unsigned", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	key, other := newKey(t), newKey(t)
	f.reopen(t, Options{SignCommit: signWith(key)})
	m, _, err := f.s.RunOnce(ctx, "signed", []string{"readproof://demo/policies/refunds"})
	if err != nil {
		t.Fatal(err)
	}
	good := signers(t, key.AllowedSignersLine("auditor@example.com"))
	sig, err := f.s.VerifyManifestSignature("signed", good)
	if err != nil || sig.Principal != "auditor@example.com" || sig.Fingerprint != key.Fingerprint() || sig.ManifestID != m.ID || !sig.CommittedAt.Equal(m.CreatedAt.Truncate(time.Second)) {
		t.Fatalf("good signature: %+v, %v", sig, err)
	}
	cases := []struct {
		name    string
		target  string
		signers evidence.AllowedSigners
		want    error
	}{
		{"unsigned", "unsigned", good, evidence.ErrNotSigned},
		{"unknown key", "signed", signers(t, other.AllowedSignersLine("auditor@example.com")), evidence.ErrUntrustedKey},
		{"expired", "signed", signers(t, `auditor@example.com valid-before="20000101Z" `+key.AuthorizedKey()), evidence.ErrKeyNotValid},
		{"not yet valid", "signed", signers(t, `auditor@example.com valid-after="29990101Z" `+key.AuthorizedKey()), evidence.ErrKeyNotValid},
		{"other namespace", "signed", signers(t, `auditor@example.com namespaces="file" `+key.AuthorizedKey()), evidence.ErrKeyNotValid},
		{"no signers", "signed", nil, evidence.ErrUntrustedKey},
	}
	for _, c := range cases {
		if _, err := f.s.VerifyManifestSignature(c.target, c.signers); !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	// an edited copy of the signed commit keeps the signature, which no
	// longer matches
	c, err := f.s.Git().Commit(gitstore.OID(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	c.Message = strings.Replace(c.Message, "readproof run", "readproof run (edited)", 1)
	edited, err := f.s.Git().PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.s.VerifyManifestSignature(string(edited), good); !errors.Is(err, evidence.ErrBadSignature) {
		t.Fatalf("edited commit: %v", err)
	}

	// the bundle records the signer; the store check agrees or not with the
	// allowed signers given
	st, data := exportStatement(t, f.s, "signed", false)
	if st.Predicate.Git.CommitSigner != key.Fingerprint() {
		t.Fatalf("commit_signer %q", st.Predicate.Git.CommitSigner)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{Signers: good})
	if c := checkNamed(rep, CheckCommitSignature); err != nil || !rep.OK() || c == nil || !strings.Contains(c.Detail, "auditor@example.com") {
		t.Fatalf("verify with good signers: %v\n%s", err, rep.Listing())
	}
	rep, _ = f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	if c := checkNamed(rep, CheckCommitSignature); !rep.OK() || c == nil || !strings.Contains(c.Detail, "not checked") {
		t.Fatalf("verify without signers:\n%s", rep.Listing())
	}
	rep, _ = f.s.VerifyEvidence(data, EvidenceVerifyOptions{Signers: cases[2].signers})
	if c := checkNamed(rep, CheckCommitSignature); rep.OK() || c == nil || c.OK {
		t.Fatalf("verify with an expired key:\n%s", rep.Listing())
	}
	// a bundle that names a signer for an unsigned commit
	st, _ = exportStatement(t, f.s, "unsigned", false)
	st.Predicate.Git.CommitSigner = key.Fingerprint()
	data, err = evidence.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	rep, _ = f.s.VerifyEvidence(data, EvidenceVerifyOptions{Signers: good})
	if c := checkNamed(rep, CheckCommitSignature); rep.OK() || c == nil || c.OK {
		t.Fatalf("claimed signer on an unsigned commit:\n%s", rep.Listing())
	}
}

// TestVerifyEvidenceStoreManifest: fields the Merkle root does not cover
// are compared with the stored manifest.
func TestVerifyEvidenceStoreManifest(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	edits := map[string]func(p *evidence.Predicate){
		"run_id":          func(p *evidence.Predicate) { p.RunID = "run-z" },
		"created":         func(p *evidence.Predicate) { p.ManifestCreatedAt = "2020-01-01T00:00:00Z" },
		"tree":            func(p *evidence.Predicate) { p.Git.Tree = strings.Repeat("1", 40) },
		"manifest_sha256": func(p *evidence.Predicate) { p.Git.ManifestSHA256 = strings.Repeat("2", 64) },
		"observed_at":     func(p *evidence.Predicate) { p.Entries[0].ObservedAt = "2020-01-01T00:00:00Z" },
		"source_revision": func(p *evidence.Predicate) { p.Entries[0].SourceRevision = "forged" },
		"bytes":           func(p *evidence.Predicate) { p.Entries[0].Bytes = 99 },
		"snapshot_id":     func(p *evidence.Predicate) { p.Entries[0].SnapshotID = strings.Repeat("3", 40) },
	}
	for name, edit := range edits {
		st, _ := exportStatement(t, f.s, "run-a", false)
		edit(&st.Predicate)
		data, err := evidence.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		if rep, err := evidence.Verify(data, evidence.VerifyOptions{Offline: true}); err != nil || !rep.OK() {
			t.Fatalf("%s: the edit should pass offline:\n%s", name, rep.Listing())
		}
		rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if c := checkNamed(rep, CheckStoreManifest); c == nil || c.OK || len(rep.Failed()) != 1 {
			t.Errorf("%s: want only store_manifest to fail:\n%s", name, rep.Listing())
		}
	}
}

// TestEvidenceReceipts: the run's receipts (and only its) are summarised;
// the store check notices an added receipt and, with the key, a forged one.
func TestEvidenceReceipts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "v1\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	secret := bytes.Repeat([]byte{7}, receipts.KeySize)
	key, err := receipts.NewKey(secret)
	if err != nil {
		t.Fatal(err)
	}
	issuer := receipts.NewIssuer(key, receipts.NewLedger(f.s.Git()))
	issue := func(session, run string) {
		t.Helper()
		res := receipts.ExecResult{Start: f.clock.Now(), End: f.clock.Now()}
		if _, err := issuer.Issue(context.Background(), receipts.CommandCall(session, run, []string{"true"}, res)); err != nil {
			t.Fatal(err)
		}
	}
	issue("s1", "run-a")
	issue("s1", "")
	issue("s0", "run-a")
	st, data := exportStatement(t, f.s, "run-a", false)
	var sum receipts.EvidenceSummary
	if err := json.Unmarshal(st.Predicate.Receipts, &sum); err != nil || sum.Count != 2 {
		t.Fatalf("summary %s: %v", st.Predicate.Receipts, err)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{ReceiptsKey: &key})
	if c := checkNamed(rep, CheckReceipts); err != nil || !rep.OK() || c == nil || !strings.Contains(c.Detail, "MACs verified") {
		t.Fatalf("verify: %v\n%s", err, rep.Listing())
	}
	other, _ := receipts.NewKey(bytes.Repeat([]byte{8}, receipts.KeySize))
	rep, _ = f.s.VerifyEvidence(data, EvidenceVerifyOptions{ReceiptsKey: &other})
	if c := checkNamed(rep, CheckReceipts); c == nil || c.OK {
		t.Fatalf("verify under another key:\n%s", rep.Listing())
	}
	issue("s2", "run-a")
	rep, _ = f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	if c := checkNamed(rep, CheckReceipts); c == nil || c.OK {
		t.Fatalf("a receipt added after export went unnoticed:\n%s", rep.Listing())
	}
}

// TestEvidenceProofOfRead: the latest verdict record of the run travels in
// the bundle and is checked against the verdict chain.
func TestEvidenceProofOfRead(t *testing.T) {
	t.Parallel()
	f := newFixture(t, probeToml, map[string]string{"a.md": "alpha\n"})
	m, rec := verifiedRun(t, f, "r", 2)
	st, data := exportStatement(t, f.s, m.ID, false)
	var got struct {
		VerdictsCommit string         `json:"verdicts_commit"`
		Entries        []VerdictEntry `json:"entries"`
	}
	if err := json.Unmarshal(st.Predicate.ProofOfRead, &got); err != nil || got.VerdictsCommit != rec.ID || len(got.Entries) != 2 {
		t.Fatalf("proof_of_read %s: %v", st.Predicate.ProofOfRead, err)
	}
	rep, err := f.s.VerifyEvidence(data, EvidenceVerifyOptions{})
	if c := checkNamed(rep, CheckProofOfRead); err != nil || !rep.OK() || c == nil {
		t.Fatalf("verify: %v\n%s", err, rep.Listing())
	}
	// a later check does not invalidate the earlier bundle
	f.clock.Add(time.Minute)
	if _, err := f.s.RecordVerdicts("r", func(got *manifest.Manifest, prev *VerdictRecord) (*VerdictRecord, error) {
		return record(got, prev, "REPLAY_SUSPECT", f.clock.Now()), nil
	}); err != nil {
		t.Fatal(err)
	}
	if rep, _ := f.s.VerifyEvidence(data, EvidenceVerifyOptions{}); !rep.OK() {
		t.Fatalf("after a second check:\n%s", rep.Listing())
	}
	// an edited verdict fails
	edited := bytes.Replace(data, []byte(`"READ_VERIFIED"`), []byte(`"READ_VERIFIEX"`), 1)
	rep, _ = f.s.VerifyEvidence(edited, EvidenceVerifyOptions{})
	if c := checkNamed(rep, CheckProofOfRead); c == nil || c.OK {
		t.Fatalf("edited verdict:\n%s", rep.Listing())
	}
}

// TestReadViewClone: in a plain clone the readproof branches are
// remote-tracking refs; the read view finds them there.
func TestReadViewClone(t *testing.T) {
	t.Parallel()
	g := gitstore.NewTestStore(t)
	blob, err := g.PutBlob([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "x", Mode: gitstore.ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "t", Email: "t@t", When: time.Unix(1e9, 0)}
	c, err := g.PutCommit(gitstore.Commit{Tree: tree, Author: sig, Committer: sig, Message: "m\n"})
	if err != nil {
		t.Fatal(err)
	}
	empty, err := g.PutTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	root, err := g.PutCommit(gitstore.Commit{Tree: empty, Author: sig, Committer: sig, Message: journalRootMessage + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: "refs/remotes/origin/readproof/receipts/sessions/s1", New: c},
		gitstore.RefUpdate{Name: "refs/remotes/origin/main", New: root},
		gitstore.RefUpdate{Name: "refs/heads/main", New: root}); err != nil {
		t.Fatal(err)
	}
	v, err := plainCloneView(g)
	if err != nil || v == g {
		t.Fatalf("plainCloneView = %v, %v; want a remote view", v, err)
	}
	if id, err := v.Ref("refs/heads/readproof/receipts/sessions/s1"); err != nil || id != c {
		t.Fatalf("Ref through the view = %s, %v", id, err)
	}
	refs, err := v.Refs("refs/heads/readproof/receipts/sessions/")
	if err != nil || len(refs) != 1 || refs[0].Name != "refs/heads/readproof/receipts/sessions/s1" {
		t.Fatalf("Refs through the view = %+v, %v", refs, err)
	}
	all, err := v.Refs("refs/")
	if err != nil || len(all) != 2 || all[0].Name != "refs/heads/main" || all[1].Name != "refs/heads/readproof/receipts/sessions/s1" {
		t.Fatalf("all refs through the view = %+v, %v", all, err)
	}
	if err := v.Update(gitstore.RefUpdate{Name: "refs/heads/x", New: c}); !errors.Is(err, ErrReadOnlyView) {
		t.Fatalf("the view accepted a write: %v", err)
	}
	// a store with its own readproof branches is its own view
	if err := g.Update(gitstore.RefUpdate{Name: "refs/heads/readproof/resources/a+b", New: c}); err != nil {
		t.Fatal(err)
	}
	if v, err := plainCloneView(g); err != nil || v != g {
		t.Fatalf("plainCloneView of a store = %v, %v", v, err)
	}
}

// FuzzVerifyEvidence: whatever a bundle holds, verifying it against a
// store never panics, and a bundle that passes agrees with the store on
// every entry.
func FuzzVerifyEvidence(f *testing.F) {
	fx := newFixture(f, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	key := newKey(f)
	fx.reopen(f, Options{SignCommit: signWith(key)})
	m, _, err := fx.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds", "readproof://demo/policies/refunds"})
	if err != nil {
		f.Fatal(err)
	}
	_, plain := exportStatement(f, fx.s, "run-a", true)
	signed, err := key.SignEnvelope(plain)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(plain)
	f.Add(signed)
	f.Add(bytes.Replace(plain, []byte(`"position": 1`), []byte(`"position": 0`), 1))
	f.Add([]byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"` + m.ID + `","digest":{"sha256":"e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"}}],"predicateType":"urn:readproof:evidence:v0.3","predicate":{"manifest_id":"` + m.ID + `","run_id":"run-a","entries":[],"receipts":{"count":1},"proof_of_read":{"verdicts_commit":"x"}}}`))
	f.Add([]byte(`{"payload":"e30=","payloadType":"application/vnd.in-toto+json","signatures":[]}`))
	pub, _ := ssh.NewPublicKey(key.Public)
	opts := EvidenceVerifyOptions{TrustedKeys: []ed25519.PublicKey{key.Public}, Signers: evidence.AllowedSigners{{Line: 1, Principals: "a", Key: pub}}}
	f.Fuzz(func(t *testing.T, data []byte) {
		rep, err := fx.s.VerifyEvidence(data, opts)
		if err != nil {
			t.Fatalf("VerifyEvidence returned an error for bundle data: %v", err)
		}
		if !rep.OK() {
			return
		}
		p := rep.Statement.Predicate
		if p.ManifestID != m.ID || len(p.Entries) != len(m.Entries) {
			t.Fatalf("a bundle for manifest %q with %d entries passed", p.ManifestID, len(p.Entries))
		}
		for i, e := range p.Entries {
			if e.URI != m.Entries[i].URI || e.ContentHash != m.Entries[i].ContentHash {
				t.Fatalf("entry %d %s %s passed, the store holds %s %s", i, e.URI, e.ContentHash, m.Entries[i].URI, m.Entries[i].ContentHash)
			}
		}
	})
}

// TestDefinitionAtSameSecond: two observations within one second (commit
// times are whole seconds) are told apart by their observed_at.
func TestDefinitionAtSameSecond(t *testing.T) {
	t.Parallel()
	const tmpl = "[[resource]]\nuri = \"readproof://demo/doc\"\nsource = { type = \"filesystem\", path = %q }\npolicy = \"require_fresh\"\n"
	f := newFixture(t, strings.Replace(tmpl, "%q", `"a.md"`, 1), map[string]string{"a.md": "first\n", "b.md": "second\n"})
	ctx := context.Background()
	if _, _, err := f.s.RunOnce(ctx, "run-a", []string{"readproof://demo/doc"}); err != nil {
		t.Fatal(err)
	}
	f.write(t, "readproof.toml", strings.Replace(tmpl, "%q", `"b.md"`, 1))
	f.reopen(t, Options{})
	f.clock.Add(300 * time.Millisecond)
	if _, _, err := f.s.RunOnce(ctx, "run-b", []string{"readproof://demo/doc"}); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(200 * time.Millisecond)
	// run-c reads b.md again: the same bytes as run-b, observed later
	if _, _, err := f.s.RunOnce(ctx, "run-c", []string{"readproof://demo/doc"}); err != nil {
		t.Fatal(err)
	}
	for run, want := range map[string]string{"run-a": "a.md", "run-b": "b.md", "run-c": "b.md"} {
		st, _ := exportStatement(t, f.s, run, false)
		cfg, _ := st.Predicate.Resources[0].Source.Config["filesystem"].(map[string]any)
		if cfg["path"] != want {
			t.Errorf("%s: definition path %v, want %s", run, cfg["path"], want)
		}
	}
}

// TestEvidenceGitStoreAsDocumented: readproof's exports (the command line
// and the MCP server pass no StoreHint) leave git.store out, and
// docs/evidence.md's table of additions says so instead of promising where
// the store was.
func TestEvidenceGitStoreAsDocumented(t *testing.T) {
	t.Parallel()
	f := newFixture(t, evidenceToml, map[string]string{"refunds.md": "Products can be refunded within 30 days.\n"})
	if _, _, err := f.s.RunOnce(context.Background(), "run-a", []string{"readproof://demo/policies/refunds"}); err != nil {
		t.Fatal(err)
	}
	st, data := exportStatement(t, f.s, "run-a", false)
	if st.Predicate.Git == nil || st.Predicate.Git.Store != "" || bytes.Contains(data, []byte(`"store":`)) {
		t.Fatalf("git block %+v: want one without store", st.Predicate.Git)
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "evidence.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "| `git.store` |") {
			if !strings.Contains(line, "`evidence export` leaves it out") {
				t.Errorf("docs/evidence.md says of git.store %q; readproof's export never writes it", line)
			}
			return
		}
	}
	t.Error("docs/evidence.md has no row for git.store")
}
