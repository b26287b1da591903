package receipts

import (
	"strings"
	"time"

	"github.com/readproof/readproof/identity"
)

// A run id is a name, and two stores can give one name to two runs (a
// pull keeps the other store's manifest as a run conflict, docs/sync.md).
// A Binding says which of them a receipt's call was made for: the run its
// run id named in the store that issued it. It is written beside the
// receipt, on the commit that appends it to its chains (docs/receipts.md,
// "Storage"), and travels with them; the receipt itself, and its MAC, are
// unchanged.
type Binding struct {
	// Manifest is the manifest commit the run id named when the receipt
	// was issued (the run was committed); "" otherwise.
	Manifest string
	// RunStarted is when the run was started, when it was open at issue:
	// its manifest, once committed, records the same started_at. Zero
	// otherwise.
	RunStarted time.Time
}

// Commit message trailers of a bound receipt (docs/receipts.md).
const (
	trailerManifest   = "run-manifest: "
	trailerRunStarted = "run-started: "
)

// IsZero reports an unbound receipt: issued by a readproof that did not
// bind receipts, without a run, or for a run id the issuing store did not
// know.
func (b Binding) IsZero() bool { return b.Manifest == "" && b.RunStarted.IsZero() }

// Of reports whether a receipt so bound was made for the manifest whose
// commit is manifestID and whose run started at startedAt. An unbound
// receipt is of every manifest of its run id, as before receipts were
// bound.
func (b Binding) Of(manifestID string, startedAt time.Time) bool {
	switch {
	case b.Manifest != "":
		return b.Manifest == manifestID
	case !b.RunStarted.IsZero():
		return b.RunStarted.Equal(startedAt)
	}
	return true
}

// trailer is the line the binding adds to an append commit's message, ""
// for none.
func (b Binding) trailer() string {
	switch {
	case b.Manifest != "":
		return trailerManifest + b.Manifest + "\n"
	case !b.RunStarted.IsZero():
		return trailerRunStarted + b.RunStarted.UTC().Format(time.RFC3339Nano) + "\n"
	}
	return ""
}

// parseBinding reads the binding of an append commit's message. A trailer
// that does not parse binds nothing (the receipt reads as unbound, as it
// would to a readproof that does not know trailers).
func parseBinding(msg string) Binding {
	var b Binding
	for line := range strings.Lines(msg) {
		line = strings.TrimSuffix(line, "\n")
		if v, ok := strings.CutPrefix(line, trailerManifest); ok && identity.IsObjectID(v) {
			b.Manifest = v
		} else if v, ok := strings.CutPrefix(line, trailerRunStarted); ok {
			if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
				b.RunStarted = t
			}
		}
	}
	if b.Manifest != "" {
		b.RunStarted = time.Time{}
	}
	return b
}
