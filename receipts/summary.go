package receipts

import (
	"errors"
	"fmt"
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
	s := EvidenceSummary{Version: SummaryVersion, Count: len(rs), IDs: make([]string, 0, len(rs)), Tools: []string{}, KeyIDs: []string{}}
	parts := make([][]byte, 0, 1+2*len(rs))
	parts = append(parts, []byte(labelSummary))
	for _, r := range rs {
		s.IDs = append(s.IDs, r.ID)
		s.Tools = append(s.Tools, r.Tool)
		s.KeyIDs = append(s.KeyIDs, r.KeyID)
		mac := r.MAC
		parts = append(parts, []byte(r.ID), mac[:])
	}
	slices.Sort(s.Tools)
	s.Tools = slices.Compact(s.Tools)
	slices.Sort(s.KeyIDs)
	s.KeyIDs = slices.Compact(s.KeyIDs)
	s.Digest = "sha256:" + framedHash(parts...).String()
	return s
}

// Matches checks, without a key, that rs are exactly the receipts s
// summarises, in order.
func (s EvidenceSummary) Matches(rs []Receipt) error {
	got := Summary(rs)
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
