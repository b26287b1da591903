// Package evidence builds, signs and verifies readproof evidence bundles: the
// Readproof v0.3 in-toto Statement (predicateType urn:readproof:evidence:v0.3)
// with its Merkle root over manifest entries, DSSE envelopes around the exact
// statement bytes, ed25519 signing keys kept outside every repository, and the
// SSH signatures (sshsig, namespace "git") that sign manifest commits so that
// stock `git verify-commit` accepts them. The format is written down in
// docs/evidence.md; the Merkle and PAE rules are pinned by vectors generated
// outside Go (testdata/merkle/generate.py).
//
// Callers hand Build plain values (Input, Entry, Resource, ReplayResult) and
// give Verify a Replayer for the store check, so this package imports neither
// the store nor the manifest packages, nor go-git; it must stay that way so an
// auditor's verifier can be built from it alone.
//
// Example:
//
//	st, err := evidence.Build(evidence.Input{RunID: "run-a", ManifestID: id, Entries: entries, WithContent: true})
//	data, err := evidence.Marshal(st)
//	report, err := evidence.Verify(data, evidence.VerifyOptions{Offline: true})
//	if !report.OK() { fmt.Print(report.Listing()) }
package evidence
