// Package probe implements proof of read as specified in
// docs/PROBE_PROTOCOL.md: HMAC time-bucket sentinels derived from a master
// secret (DeriveKeys, Keys.Sentinel), the four verdicts and their windows
// (Adjudicator for the online server, the stateless Keys.Check and
// Keys.CheckAnswer for runs), the probe line and free-text sentinel search
// (ProbeLine, AppendProbeLine, FindSentinels), JSON reports (ParseReport),
// key files for the offline path (LoadKeys, CreateKeyFile, RotateKeyFile),
// and the rate-limited HTTP server (NewServer, Server.Serve).
//
// Everything that depends on time reads a Clock, so tests move time instead
// of sleeping. Sentinels are never persisted by this package: the issuance
// log keeps SHA-256 fingerprints, the audit log keeps pepper-hashed client
// addresses, and the offline Issued record keeps only (session, bucket,
// length), from which the key holder recomputes the sentinel.
//
// probe imports only the standard library. It must not import go-git, the
// store or the CLI; the commands package wires it to runs (`readproof probe
// serve`, `run mount --probe`, `probe check`) on top of this API.
package probe
