package manifest

import "time"

// Some is what DecodeSome reads of a manifest: the View of every entry,
// the time its run started, and whole the entries it was asked for.
type Some struct {
	View
	StartedAt time.Time
	// Kept holds the entries at the positions keep accepted, whole, in
	// position order.
	Kept []Entry
}

// DecodeSome is DecodeView for a reader that needs a few entries whole
// besides the View of all (a page of `readproof_manifest` or
// `readproof_diff`): it accepts and refuses what Decode does, with
// Decode's errors, and reads whole, as Decode does, the entries at the
// positions keep accepts (called with every position, from more than one
// goroutine for a large manifest). A manifest as Encode writes it is read
// as DecodeView reads it, and each kept entry is read again whole, with
// strings of its own: the rest of the text is not kept, nor a Manifest of
// every entry built (at 20,000 entries Decode's Manifest is about 20 MB
// of heap, its View about 5 MB).
func DecodeSome(data []byte, keep func(i int) bool) (*Some, error) {
	if v, d, ok := decodeViewFastKeep(data, splitAt, keep); ok {
		return &Some{View: *v, StartedAt: d.started, Kept: d.wholes}, nil
	}
	m, err := Decode(data)
	if err != nil {
		return nil, err
	}
	s := &Some{View: *ViewOf(m), StartedAt: m.StartedAt}
	for i := range m.Entries {
		if keep(i) {
			s.Kept = append(s.Kept, m.Entries[i])
		}
	}
	return s, nil
}
