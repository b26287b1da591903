package proofread

import (
	"errors"
	"fmt"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// ExtraKey names the proof-of-read part of a manifest's extra data.
const ExtraKey = "proof_of_read"

// NotChecked is the proof-of-read part of a manifest whose probed entries
// have no verdict yet.
type NotChecked struct {
	Checked bool `json:"checked"`
}

func verdictLine(v store.VerdictEntry, r *store.VerdictRecord) string {
	// A time given with probe check --at decides the windows as the clock
	// would (a back-dated check can give READ_VERIFIED to an old answer), so
	// the line says when the clock was not read.
	override := ""
	if r.ClockOverride {
		override = ", clock set with --at"
	}
	l := fmt.Sprintf("proof of read: [%d] %s %s checked %s (check %d%s)", v.Position, v.URI, v.Verdict, r.CheckedAt.UTC().Format(time.RFC3339), r.Check, override)
	if v.Adjudicated && v.AdjudicatedVerdict != "" && v.AdjudicatedAt != nil && !v.AdjudicatedAt.Equal(r.CheckedAt) {
		l += fmt.Sprintf("; first adjudicated %s at %s", v.AdjudicatedVerdict, v.AdjudicatedAt.UTC().Format(time.RFC3339))
	}
	return l
}

// verdictLines gives the proof-of-read lines of a manifest: the latest
// verdict of each probed entry, or "not checked"; and the MAC check of the
// verdict record, made by mac (only when there is a record).
func verdictLines(s *store.Store, m *manifest.Manifest, mac func(*store.VerdictRecord) MACResult) (*store.VerdictRecord, MACResult, []string, error) {
	if probedCount(m) == 0 {
		return nil, MACResult{}, nil, nil
	}
	rec, err := s.Verdicts(m.RunID)
	if err != nil {
		return nil, MACResult{}, nil, err
	}
	if rec != nil && rec.ManifestID != m.ID {
		rec = nil
	}
	var lines []string
	var auth MACResult
	if rec != nil {
		auth = mac(rec)
		if l := authLine(auth); l != "" {
			lines = append(lines, l)
		}
	}
	for _, en := range m.Entries {
		if en.Probe == nil {
			continue
		}
		if v := rec.Entry(en.Position); v != nil {
			lines = append(lines, verdictLine(*v, rec))
			continue
		}
		lines = append(lines, fmt.Sprintf("proof of read: [%d] %s probed, not checked (readproof probe check %s --answer FILE)", en.Position, en.URI, m.RunID))
	}
	return rec, auth, lines, nil
}

// ManifestPart returns the proof-of-read part of a manifest: data for
// --json (a Report, or NotChecked; nil for a run without probed entries)
// and the text lines `manifest` prints after the entries.
func ManifestPart(s *store.Store, m *manifest.Manifest) (any, []string, error) {
	rec, auth, lines, err := verdictLines(s, m, func(rec *store.VerdictRecord) MACResult { return RecordMAC(s, rec) })
	if err != nil || lines == nil {
		return nil, nil, err
	}
	lines = append([]string{""}, lines...)
	if rec == nil {
		return NotChecked{}, lines, nil
	}
	return Report{Commit: rec.ID, VerdictRecord: rec, MACCheck: auth.Status, MACProblem: auth.Problem}, lines, nil
}

// ManifestViewLines is ManifestPart's text lines for a manifest read as a
// View.
func ManifestViewLines(s *store.Store, v *manifest.View) ([]string, error) {
	_, lines, err := ManifestViewPart(s, v)
	return lines, err
}

// ManifestViewPart is ManifestPart for a manifest read as a View.
func ManifestViewPart(s *store.Store, v *manifest.View) (any, []string, error) {
	// verdictLines reads of a manifest its ids and the positions and
	// URIs of its probed entries: a Manifest of those is all it needs.
	m := &manifest.Manifest{ID: v.ID, RunID: v.RunID}
	for i := range v.Entries {
		if en := &v.Entries[i]; en.Probed {
			m.Entries = append(m.Entries, manifest.Entry{Position: en.Position, URI: en.URI, Probe: &manifest.Probe{}})
		}
	}
	return ManifestPart(s, m)
}

// MAC check outcomes of a verdict record (Report.MACCheck).
const (
	MACVerified        = "verified"        // the MAC authenticates the record under the probe key
	MACFailed          = "failed"          // the record was edited, forged or moved: NOT AUTHENTIC
	MACMissing         = "missing"         // the record carries no MAC
	MACOtherKey        = "other-key"       // under another (rotated) probe key: not checkable here
	MACNotChecked      = "not-checked"     // no probe key at hand
	MACKeyUnusable     = "key-unusable"    // a probe key file is there but cannot be loaded
	MACCheckImpossible = "could-not-check" // the chain could not be read
)

// MACResult is the outcome of checking one verdict record's MAC.
type MACResult struct {
	Status  string // one of the MAC* constants
	Problem string // what failed, for every status but verified and not-checked
}

// RecordMAC checks the MAC of verdict record rec (rec.ID its commit) with
// the probe key when one is at hand (CheckKeys).
func RecordMAC(s *store.Store, rec *store.VerdictRecord) MACResult {
	keys, _, warn := CheckKeys(s)
	return recordMAC(s, rec, keys, warn)
}

// recordMAC is RecordMAC with the probe key already looked for (CheckKeys).
func recordMAC(s *store.Store, rec *store.VerdictRecord, keys *probe.Keys, warn error) MACResult {
	switch {
	case warn != nil:
		return MACResult{Status: MACKeyUnusable, Problem: warn.Error()}
	case keys == nil:
		return MACResult{Status: MACNotChecked}
	}
	parent, err := s.VerdictMACParent(gitstore.OID(rec.ID))
	if err != nil {
		return MACResult{Status: MACCheckImpossible, Problem: err.Error()}
	}
	err = store.CheckVerdictMAC(rec, parent, *keys)
	switch {
	case err == nil:
		return MACResult{Status: MACVerified}
	case errors.Is(err, store.ErrVerdictUnauthenticated):
		return MACResult{Status: MACMissing, Problem: err.Error()}
	case errors.Is(err, store.ErrVerdictOtherKey):
		return MACResult{Status: MACOtherKey, Problem: err.Error()}
	}
	return MACResult{Status: MACFailed, Problem: err.Error()}
}

// authLine is the line `manifest` and `replay` print about the verdict
// record's MAC: nothing when it verifies or no key is at hand, a clear
// mark when it does not authenticate the record.
func authLine(r MACResult) string {
	switch r.Status {
	case MACFailed:
		return "proof of read: verdicts: NOT AUTHENTIC (MAC mismatch): " + r.Problem
	case MACMissing:
		return "proof of read: verdicts: not authenticated (the record carries no MAC)"
	case MACOtherKey:
		return "proof of read: verdicts: MAC not checked: " + r.Problem
	case MACKeyUnusable:
		return "proof of read: verdicts: " + NotCheckedWarning(errors.New(r.Problem))
	case MACCheckImpossible:
		return "proof of read: verdicts: MAC could not be checked: " + r.Problem
	}
	return ""
}

// ReplayLines re-derives the delivered bytes of every probed entry with the
// configured key and compares their hash with the manifest's record. An
// error (wrapping store.ErrMismatch) marks the replay failed.
func ReplayLines(s *store.Store, res *store.ReplayResult) ([]string, error) {
	m := res.Manifest
	var probed []manifest.Entry
	for _, en := range m.Entries {
		if en.Probe != nil {
			probed = append(probed, en)
		}
	}
	if len(probed) == 0 {
		return nil, nil
	}
	keys, path, warn := CheckKeys(s)
	var lines []string
	bad := 0
	for _, en := range probed {
		var content []byte
		for _, r := range res.Entries {
			if r.Position == en.Position && r.Match {
				content = r.Content
			}
		}
		switch {
		case content == nil:
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash not re-checked: the snapshot did not reproduce", en.Position, en.URI))
			continue
		case keys == nil:
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash %s could not be re-checked: no usable probe key at %s", en.Position, en.URI, manifest.Short(en.Probe.DeliveredHash), path))
			continue
		}
		iss, _, err := issuance(*keys, m.RunID, en, content)
		if err != nil {
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash mismatch: the probe record is invalid: %v", en.Position, en.URI, err))
			bad++
			continue
		}
		out, err := keys.Deliver(content, iss)
		if err != nil {
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash mismatch: the probe record is invalid: %v", en.Position, en.URI, err))
			bad++
			continue
		}
		if got := SHA256(out); got != en.Probe.DeliveredHash || int64(len(out)) != en.Probe.DeliveredSize {
			lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered hash mismatch: the key gives %s (%d bytes), the manifest records %s (%d bytes)",
				en.Position, en.URI, manifest.Short(got), len(out), manifest.Short(en.Probe.DeliveredHash), en.Probe.DeliveredSize))
			bad++
			continue
		}
		lines = append(lines, fmt.Sprintf("proof of read: [%d] %s delivered bytes verified (%s, %d bytes)", en.Position, en.URI, manifest.Short(en.Probe.DeliveredHash), en.Probe.DeliveredSize))
	}
	_, _, vl, err := verdictLines(s, m, func(rec *store.VerdictRecord) MACResult { return recordMAC(s, rec, keys, warn) })
	if err != nil {
		return lines, err
	}
	lines = append(lines, vl...)
	if bad > 0 {
		noun := "entries"
		if bad == 1 {
			noun = "entry"
		}
		return lines, hint.With(fmt.Errorf("manifest %s: %d probed %s: delivered bytes do not match the recorded hash: %w", m.ID, bad, noun, store.ErrMismatch),
			"the probe key was rotated since the run, or the record was altered; with the original key the hash must match")
	}
	return lines, nil
}
