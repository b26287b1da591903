package proofread

import (
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
	"github.com/readproof/readproof/probe"
)

// issuance returns the probe issuance of a probed manifest entry of run
// runID and whether the key reproduces the entry's delivered_hash from
// content (nil when the snapshot is not at hand): store.ProbeIssuance,
// which evidence's store check of a verdict record uses too.
func issuance(keys probe.Keys, runID string, en manifest.Entry, content []byte) (probe.Issued, bool, error) {
	return store.ProbeIssuance(keys, runID, en, content)
}
