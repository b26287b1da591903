package mcpserver

// Pages of the entry lists of readproof_manifest, readproof_diff and
// readproof_replay.

import (
	"fmt"

	"github.com/readproof/readproof/internal/hint"
)

// DefaultPageEntries is the most entries one answer of readproof_manifest,
// readproof_diff or readproof_replay lists when the server bounds its
// answers (Options.MaxAnswerBytes set, as `readproof mcp --http` does by
// default). Before, every entry was answered at once: a write token's run
// of 20,000 entries (one small document mounted again and again) made any
// read token's diff of two such runs answer 19 MB at 335 MB of peak RSS.
// A page of 1,000 entries is about 1 MB of JSON.
const DefaultPageEntries = 1000

// Page says which part of an entry list an answer holds. It is empty (no
// member in the answer) when the answer holds the whole list and no page
// was asked for, so such answers keep their shape from before pages.
type Page struct {
	TotalEntries    int `json:"total_entries,omitempty" jsonschema:"entries in the whole list (a run's entries; for diff, its changes); set when entry_offset or entry_limit was passed or the list was cut to a page"`
	EntryOffset     int `json:"entry_offset,omitempty" jsonschema:"position in the whole list of the first entry returned"`
	NextEntryOffset int `json:"next_entry_offset,omitempty" jsonschema:"entry_offset to pass for the next page; absent when the answer reaches the last entry"`
}

// pageBound is the most entries one answer lists, 0 for no bound.
func (s *Server) pageBound() int {
	if s.opts.pageEntries != 0 {
		return s.opts.pageEntries
	}
	if s.opts.MaxAnswerBytes > 0 {
		return DefaultPageEntries
	}
	return 0
}

// pageLen is the most entries the page in asks for holds, within the
// server's bound: 0 for every entry. page and pageKeep both take it, so the
// entries read whole are those answered.
func (s *Server) pageLen(in PageInput) int {
	n := in.EntryLimit
	if b := s.pageBound(); b > 0 && (n == 0 || n > b) {
		n = b
	}
	return n
}

// page is the range [from, to) of a list of total entries that in asks
// for, within the server's bound, and the Page an answer reports. It is
// decided from the count alone, before any entry is read or built.
func (s *Server) page(what string, total int, in PageInput) (from, to int, p Page, err error) {
	if in.EntryOffset < 0 || in.EntryLimit < 0 {
		return 0, 0, Page{}, hint.With(fmt.Errorf("%s: entry_offset %d and entry_limit %d must not be negative", what, in.EntryOffset, in.EntryLimit), "pass 0 or a positive number")
	}
	if in.EntryOffset > total {
		return 0, 0, Page{}, hint.With(fmt.Errorf("%s: entry_offset %d is past the last entry (there are %d)", what, in.EntryOffset, total),
			fmt.Sprintf("pass an entry_offset from 0 to %d", max(total-1, 0)))
	}
	n := s.pageLen(in)
	from, to = in.EntryOffset, total
	if n > 0 && n < total-from {
		to = from + n
	}
	if in.EntryOffset == 0 && in.EntryLimit == 0 && to == total {
		// The whole list, unasked: the answer is what it was before pages.
		return from, to, Page{}, nil
	}
	p = Page{TotalEntries: total, EntryOffset: from}
	if to < total {
		p.NextEntryOffset = to
	}
	return from, to, p, nil
}

// pageKeep says which positions the page of in holds, before the count
// of the list is known (page then decides it from the count): a reader
// reads whole only those. It accepts none when in asks for no page page
// would answer (a negative offset or limit).
func (s *Server) pageKeep(in PageInput) func(i int) bool {
	if in.EntryOffset < 0 || in.EntryLimit < 0 {
		return func(int) bool { return false }
	}
	n := s.pageLen(in)
	from := in.EntryOffset
	return func(i int) bool { return i >= from && (n == 0 || i-from < n) }
}

// note is the sentence a text summary ends with when the answer holds
// part of the list, "" when it holds all of it.
func (p Page) note(shown int) string {
	if p.EntryOffset == 0 && p.NextEntryOffset == 0 {
		return ""
	}
	s := fmt.Sprintf(" This answer lists %s of %d", entrySpan(p.EntryOffset, p.EntryOffset+shown), p.TotalEntries)
	if shown == 0 {
		s = fmt.Sprintf(" This answer lists no entry of %d", p.TotalEntries)
	}
	if p.NextEntryOffset > 0 {
		return s + fmt.Sprintf("; continue with entry_offset = %d.", p.NextEntryOffset)
	}
	return s + "."
}

// entrySpan names the entries [from, to), to > from, by their first and
// last positions, as the past-the-end hint does ("from 0 to 6").
func entrySpan(from, to int) string {
	if to-from == 1 {
		return fmt.Sprintf("entry %d", from)
	}
	return fmt.Sprintf("entries %d to %d", from, to-1)
}
