package receipts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strings"
)

// SummaryVersion is the version of EvidenceSummary.
const SummaryVersion = 1

const labelSummary = "readproof receipt summary v1"

// ErrSummaryMismatch is wrapped when receipts do not match a summary.
var ErrSummaryMismatch = errors.New("receipts do not match the summary")

// EvidenceSummary is the compact record of a run's receipts carried in an
// evidence bundle. Digest binds the ids and MACs in order, so a verifier
// holding the receipts (from the store) can check they are the ones
// summarised, and with the key that each is genuine.
type EvidenceSummary struct {
	Version int      `json:"version"`
	Count   int      `json:"count"`
	IDs     []string `json:"ids"`
	// Tools are the distinct tool names, sorted.
	Tools []string `json:"tools"`
	// KeyIDs are the distinct key ids, sorted (one unless the key rotated
	// during the run).
	KeyIDs []string `json:"key_ids"`
	// Digest is "sha256:" and the hex of the framed hash of the label
	// "readproof receipt summary v1" and each receipt's id and MAC, in order
	// (docs/receipts.md, "Evidence summary").
	Digest string `json:"digest"`
}

// Summary summarises receipts in the given order (issue order for a
// session or run listing).
func Summary(rs []Receipt) EvidenceSummary {
	b := NewSummaryBuilder()
	for _, r := range rs {
		b.Add(r)
	}
	return b.Summary()
}

// SummaryBuilder summarises receipts given one at a time, in order, as
// Summary summarises a slice of them: it keeps their ids and their
// distinct tools and key ids, never the receipts, so that a run's receipts
// can be read one at a time into a bundle.
type SummaryBuilder struct {
	ids           []string
	tools, keyIDs map[string]bool
	h             hash.Hash
}

// NewSummaryBuilder returns a builder of the summary of no receipts yet.
func NewSummaryBuilder() *SummaryBuilder {
	b := &SummaryBuilder{ids: []string{}, tools: map[string]bool{}, keyIDs: map[string]bool{}, h: sha256.New()}
	writeFrame(b.h, []byte(labelSummary))
	return b
}

// Add summarises r after the receipts added before it.
func (b *SummaryBuilder) Add(r Receipt) {
	b.ids = append(b.ids, r.ID)
	b.tools[r.Tool] = true
	b.keyIDs[r.KeyID] = true
	mac := r.MAC
	writeFrame(b.h, []byte(r.ID))
	writeFrame(b.h, mac[:])
}

// Len is the number of receipts added.
func (b *SummaryBuilder) Len() int { return len(b.ids) }

// Summary is the summary of the receipts added, in the order added.
func (b *SummaryBuilder) Summary() EvidenceSummary {
	var d Digest
	copy(d[:], b.h.Sum(nil))
	return EvidenceSummary{Version: SummaryVersion, Count: len(b.ids), IDs: slices.Clip(b.ids),
		Tools: sortedKeys(b.tools), KeyIDs: sortedKeys(b.keyIDs), Digest: "sha256:" + d.String()}
}

// sortedKeys are the keys of m, sorted ([] for none, never nil: a
// summary's arrays are never null).
func sortedKeys(m map[string]bool) []string {
	keys := slices.AppendSeq(make([]string, 0, len(m)), maps.Keys(m))
	slices.Sort(keys)
	return keys
}

// Matches checks, without a key, that rs are exactly the receipts s
// summarises, in order.
func (s EvidenceSummary) Matches(rs []Receipt) error { return s.MatchesSummary(Summary(rs)) }

// MatchesSummary is Matches given the summary of the receipts (a
// SummaryBuilder's, which read them one at a time).
func (s EvidenceSummary) MatchesSummary(got EvidenceSummary) error {
	switch {
	case s.Version != SummaryVersion:
		return fmt.Errorf("%w: summary version %d, this readproof reads version %d", ErrSummaryMismatch, s.Version, SummaryVersion)
	case s.Count != got.Count || s.Count != len(s.IDs):
		return fmt.Errorf("%w: summary counts %d receipts (%d ids), found %d", ErrSummaryMismatch, s.Count, len(s.IDs), got.Count)
	case !slices.Equal(s.IDs, got.IDs):
		return fmt.Errorf("%w: receipt ids differ", ErrSummaryMismatch)
	case !slices.Equal(s.Tools, got.Tools) || !slices.Equal(s.KeyIDs, got.KeyIDs):
		return fmt.Errorf("%w: tools or key ids differ (summary: %s / %s)", ErrSummaryMismatch, strings.Join(s.Tools, ","), strings.Join(s.KeyIDs, ","))
	case s.Digest != got.Digest:
		return fmt.Errorf("%w: digest %s, receipts give %s", ErrSummaryMismatch, s.Digest, got.Digest)
	}
	return nil
}

// VerifySummary checks that rs match s (Matches) and that every receipt's
// MAC verifies under key. Errors wrap ErrSummaryMismatch, ErrTampered or
// ErrUnknownKey.
func VerifySummary(s EvidenceSummary, rs []Receipt, key Key) error {
	if err := s.Matches(rs); err != nil {
		return err
	}
	for _, r := range rs {
		if err := Verify(r, key); err != nil {
			return fmt.Errorf("verifying receipt summary: %w", err)
		}
	}
	return nil
}
