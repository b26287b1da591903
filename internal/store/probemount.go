package store

import (
	"crypto/sha256"
	"encoding/hex"

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
	sum := sha256.Sum256(out)
	return "sha256:"+hex.EncodeToString(sum[:]) == en.Probe.DeliveredHash
}

// mountedWith returns the positions of m's probed entries that keys were
// mounted with: keys reproduce the entry's delivered hash from the
// snapshot the store holds.
func (s *Store) mountedWith(keys probe.Keys, m *manifest.Manifest) map[int]bool {
	out := map[int]bool{}
	for _, en := range m.Entries {
		if en.Probe == nil {
			continue
		}
		c, err := s.Content(en.Snapshot)
		if err != nil {
			continue
		}
		sum := sha256.Sum256(c)
		if "sha256:"+hex.EncodeToString(sum[:]) != en.ContentHash {
			continue
		}
		if _, ok, _ := ProbeIssuance(keys, m.RunID, en, c); ok {
			out[en.Position] = true
		}
	}
	return out
}
