package manifest

import (
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/identity"
)

// validateSerial is Validate as it was: entry after entry, one pass.
func validateSerial(m *Manifest) error {
	if err := identity.ValidateRunID(m.RunID); err != nil {
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if m.Caller != "" {
		if err := identity.ValidateCaller(m.Caller); err != nil {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
	}
	files := make(map[string]bool, len(m.Entries))
	for i, e := range m.Entries {
		if e.Position != i {
			return fmt.Errorf("%w: entry %d has position %d", ErrInvalid, i, e.Position)
		}
		u, err := identity.ParseURI(e.URI)
		if err != nil || u.Tag != "" {
			return fmt.Errorf("%w: entry %d: uri %q", ErrInvalid, i, e.URI)
		}
		if e.Ref != "" {
			if err := identity.ValidateTag(e.Ref); err != nil {
				return fmt.Errorf("%w: entry %d: %v", ErrInvalid, i, err)
			}
		}
		if !identity.IsObjectID(e.Snapshot) {
			return fmt.Errorf("%w: entry %d: snapshot %q is not an object id", ErrInvalid, i, e.Snapshot)
		}
		if !IsContentHash(e.ContentHash) {
			return fmt.Errorf("%w: entry %d: content hash %q", ErrInvalid, i, e.ContentHash)
		}
		switch e.Decision {
		case DecisionFetch, DecisionUseCurrent, DecisionUsePinned, DecisionUseTag:
		default:
			return fmt.Errorf("%w: entry %d: decision %q", ErrInvalid, i, e.Decision)
		}
		if e.Bytes < 0 {
			return fmt.Errorf("%w: entry %d: negative size", ErrInvalid, i)
		}
		if e.File != "" {
			if !strings.HasPrefix(e.File, "content/") || files[e.File] {
				return fmt.Errorf("%w: entry %d: file %q", ErrInvalid, i, e.File)
			}
			files[e.File] = true
		}
	}
	if m.TraceID != "" && !IsTraceID(m.TraceID) {
		return fmt.Errorf("%w: trace_id %q is not a W3C trace id (32 lowercase hex digits, not all zero)", ErrInvalid, m.TraceID)
	}
	return nil
}

// Validate checks a large manifest's entries in two halves side by side:
// it reports the same fault as checking them one after the other, for one
// or two faults of each kind anywhere (either half, at the split, in the
// same entry).
func TestValidateMatchesSerial(t *testing.T) {
	const n = validateSplit + 6
	faults := []func(e *Entry, i int){
		func(e *Entry, i int) { e.Position = i + 1 },
		func(e *Entry, i int) { e.URI = "readproof://x" },
		func(e *Entry, i int) { e.URI += "@tag" },
		func(e *Entry, i int) { e.Ref = "-bad" },
		func(e *Entry, i int) { e.Snapshot = "abc" },
		func(e *Entry, i int) { e.ContentHash = "sha256:x" },
		func(e *Entry, i int) { e.Decision = "guess" },
		func(e *Entry, i int) { e.Bytes = -1 },
		func(e *Entry, i int) { e.File = "elsewhere/x" },
		func(e *Entry, i int) { e.File = "content/bench/docs/d0" }, // entry 0's
	}
	// Pairs of places: each half before the other, both at the split,
	// both in one entry.
	pairs := [][2]int{{0, n / 2}, {n / 2, 0}, {n/2 - 1, n / 2}, {n / 2, n/2 - 1}, {n / 2, n / 2}, {n - 1, 1}, {n/2 + 1, n - 1}}
	base := manifestOf(n)
	if err := base.Validate(); err != nil {
		t.Fatal(err)
	}
	cases := 0
	check := func(m *Manifest, what string) {
		t.Helper()
		cases++
		got, want := fmt.Sprint(m.Validate()), fmt.Sprint(validateSerial(m))
		if got != want {
			t.Fatalf("%s: Validate says %s, one entry after the other %s", what, got, want)
		}
	}
	for fi, f := range faults {
		for gi, g := range faults {
			for _, p := range pairs {
				i, j := p[0], p[1]
				ei, ej := base.Entries[i], base.Entries[j]
				f(&base.Entries[i], i)
				g(&base.Entries[j], j)
				check(base, fmt.Sprintf("fault %d at %d, fault %d at %d", fi, i, gi, j))
				base.Entries[i], base.Entries[j] = ei, ej
			}
		}
	}
	m := *base
	m.RunID = "0123456789012345678901234567890123456789"
	check(&m, "run id")
	m = *base
	m.TraceID = strings.Repeat("0", 32)
	check(&m, "trace id")
	small := manifestOf(3)
	small.Entries[2].File = small.Entries[1].File
	check(small, "small")
	t.Logf("%d cases", cases)
}
