package store

import (
	"fmt"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// ProbeIssuance returns the probe issuance of a probed manifest entry of run
// runID and whether keys reproduce the entry's delivered_hash from content
// (nil when the snapshot is not at hand): whether keys are the key the
// entry was mounted with.
//
// An entry is mounted under the session bound to its content
// (probe.ContentSession), and its probe record says so (session
// "content"): it is checked under that session only. An entry mounted
// before sessions were bound used RUNID.POSITION (probe.EntrySession) and
// has no session member; such an entry is recognised by its
// delivered_hash, which only the key can reproduce, so a record cannot be
// edited into the older session (its member removed) without the key.
// When neither reproduces the hash (another key, a missing snapshot), the
// bound session is used.
func ProbeIssuance(keys probe.Keys, runID string, en manifest.Entry, content []byte) (probe.Issued, bool, error) {
	bound, err := probe.ContentSession(runID, en.Position, en.ContentHash)
	if err != nil {
		return probe.Issued{}, false, err
	}
	iss := probe.Issued{Session: bound, Bucket: en.Probe.Bucket, Length: en.Probe.Length}
	if content == nil || !keys.Valid() {
		return iss, false, nil
	}
	if delivers(keys, iss, en, content) {
		return iss, true, nil
	}
	if en.Probe.Session == manifest.ProbeSessionContent {
		return iss, false, nil
	}
	legacy, err := probe.EntrySession(runID, en.Position)
	if err != nil {
		return iss, false, nil
	}
	old := probe.Issued{Session: legacy, Bucket: en.Probe.Bucket, Length: en.Probe.Length}
	if delivers(keys, old, en, content) {
		return old, true, nil
	}
	return iss, false, nil
}

// delivers reports whether content delivered under iss gives the entry's
// recorded delivered hash and size.
func delivers(keys probe.Keys, iss probe.Issued, en manifest.Entry, content []byte) bool {
	out, err := keys.Deliver(content, iss)
	if err != nil || int64(len(out)) != en.Probe.DeliveredSize {
		return false
	}
	return contentHash(out) == en.Probe.DeliveredHash
}

// mountedWith reports whether keys were mounted with m's probed entry at
// position pos: keys reproduce its delivered hash from the snapshot objs
// hold (read up to the size the entry records: a pull judges snapshots a
// remote sent). cache keeps the answers across the records of one chain.
func mountedWith(objs gitstore.Reader, keys probe.Keys, m *manifest.Manifest, pos int, cache map[int]bool) bool {
	if ok, done := cache[pos]; done {
		return ok
	}
	ok := false
	for _, en := range m.Entries {
		if en.Position != pos || en.Probe == nil {
			continue
		}
		if en.Bytes < 0 {
			break
		}
		c, err := objs.BlobAtMost(gitstore.OID(en.Snapshot), en.Bytes)
		if err != nil {
			break
		}
		if contentHash(c) != en.ContentHash {
			break
		}
		_, ok, _ = ProbeIssuance(keys, m.RunID, en, c)
		break
	}
	cache[pos] = ok
	return ok
}

// VerdictWithoutKey says why rec, a record of a check of m that its chain's
// rules (JudgeVerdictChain, judged j) pass, was nonetheless written without
// the probe key: "" when nothing shows it. Evidence verify fails such a
// record's proof_of_read and readproof verify reports it broken, so the two
// agree (before session 29 verify only warned of both).
//
//   - No MAC and no mac_key, for a manifest with an entry bound to its
//     content (session "content"): verdict records carry a MAC since before
//     that binding, and an older readproof refuses such a manifest, so no
//     genuine check of one lacks it. Judged with or without the key.
//   - Another mac_key, with keys at hand, giving an entry mounted with the
//     key in use (the key reproduces its delivered hash) a verdict but
//     HALLUCINATED, delivered_hash_verified, or an adjudication (the
//     verdict the record finally gives): a check under another key finds
//     neither the entry's sentinel nor its delivered bytes.
//
// mounted caches which entries keys were mounted with (mountedWith, read
// only for an entry such a record gives more than HALLUCINATED) across the
// records of one chain; a caller passes a pointer to a nil map.
func (s *Store) VerdictWithoutKey(rec *VerdictRecord, j VerdictJudgement, m *manifest.Manifest, keys *probe.Keys, mounted *map[int]bool) string {
	return VerdictWithoutKeyIn(s.git, rec, j, m, keys, mounted)
}

// VerdictWithoutKeyIn is Store.VerdictWithoutKey judged with the objects
// of objs: a pull (internal/share) judges the records it would adopt with
// the objects it fetched, before any ref of the store names them, by the
// same rule verify and evidence verify apply.
func VerdictWithoutKeyIn(objs gitstore.Reader, rec *VerdictRecord, j VerdictJudgement, m *manifest.Manifest, keys *probe.Keys, mounted *map[int]bool) string {
	if !VerdictWithoutKeyApplies(rec, j, keys) || rec.ManifestID != m.ID {
		return ""
	}
	if rec.MAC == "" && rec.MACKey == "" {
		for _, en := range m.Entries {
			if en.Probe != nil && en.Probe.Session == manifest.ProbeSessionContent {
				return fmt.Sprintf("verdict record %s of run %s (check %d) carries no MAC, but entry %d of manifest %s was mounted by a readproof that authenticates every verdict record: the record was written without the probe key",
					rec.ID, rec.RunID, rec.Check, en.Position, m.ID)
			}
		}
	}
	if j.Standing != VerdictOtherKey || keys == nil {
		return ""
	}
	for _, v := range rec.Entries {
		// the verdict the record finally gives: an adjudication
		// (adjudicated, adjudicated_verdict) gives the entry a positive
		// verdict whatever its verdict field says (before session 29 a
		// HALLUCINATED entry adjudicated READ_VERIFIED passed)
		if v.Verdict == string(probe.Hallucinated) && !v.DeliveredHashVerified && !v.Adjudicated && v.AdjudicatedVerdict == "" {
			continue // what a check under another key gives: no snapshot read
		}
		if *mounted == nil {
			*mounted = map[int]bool{}
		}
		if mountedWith(objs, *keys, m, v.Position, *mounted) {
			given := text.Printable(v.Verdict)
			switch {
			case v.AdjudicatedVerdict != "" && v.AdjudicatedVerdict != v.Verdict:
				given += fmt.Sprintf(", adjudicated %q", text.Printable(v.AdjudicatedVerdict))
			case v.Adjudicated && v.AdjudicatedVerdict == "" && v.Verdict == string(probe.Hallucinated):
				given += ", adjudicated" // what fails it: a positive verdict, unnamed
			}
			return fmt.Sprintf("verdict record %s of run %s (check %d) names key %q, but entry %d was mounted with the probe key in use, so a check under another key could not give it %s (delivered_hash_verified %v): the record was written without the key",
				rec.ID, rec.RunID, rec.Check, text.Printable(rec.MACKey), v.Position, given, v.DeliveredHashVerified)
		}
	}
	return ""
}

// VerdictWithoutKeyApplies reports whether VerdictWithoutKey can find
// anything of rec, judged j, whatever its manifest: rec is not broken, and
// it has neither MAC nor mac_key, or it stands under another key and keys
// are at hand. A pull reads the manifest a record names only then.
func VerdictWithoutKeyApplies(rec *VerdictRecord, j VerdictJudgement, keys *probe.Keys) bool {
	if j.Standing.Broken() {
		return false
	}
	return rec.MAC == "" && rec.MACKey == "" || keys != nil && j.Standing == VerdictOtherKey
}
