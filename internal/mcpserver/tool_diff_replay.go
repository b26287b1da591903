package mcpserver

// Diff and replay: comparing two runs, and re-reading a run from the store
// with windows over its bytes.

import (
	"context"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/proofread"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/text"
	"github.com/readproof/readproof/manifest"
)

// DiffChange is one entry's fate between two runs.
type DiffChange struct {
	Kind             string          `json:"kind" jsonschema:"added, removed, changed or unchanged"`
	URI              string          `json:"uri"`
	A                *manifest.Entry `json:"a,omitempty" jsonschema:"the entry in run a"`
	B                *manifest.Entry `json:"b,omitempty" jsonschema:"the entry in run b"`
	Why              string          `json:"why,omitempty" jsonschema:"for changed entries: source revision, observation time and tag on each side"`
	Unified          string          `json:"unified,omitempty" jsonschema:"unified diff of the content, for changed entries"`
	UnifiedTruncated bool            `json:"unified_truncated,omitempty" jsonschema:"the unified diff was cut or left out to keep the result under 1 MiB"`
}

// DiffCounts counts changes by kind.
type DiffCounts struct {
	Changed   int `json:"changed"`
	Added     int `json:"added"`
	Removed   int `json:"removed"`
	Unchanged int `json:"unchanged"`
}

// DiffOutput compares two runs.
type DiffOutput struct {
	A       string       `json:"a" jsonschema:"manifest id of run a"`
	B       string       `json:"b" jsonschema:"manifest id of run b"`
	RunA    string       `json:"run_a"`
	RunB    string       `json:"run_b"`
	Counts  DiffCounts   `json:"counts"`
	Changes []DiffChange `json:"changes" jsonschema:"the changes of this page, one per entry of either run (every one unless next_entry_offset is set)"`
	Page
	Receipt
}

func (s *Server) diff(_ context.Context, c *call, in DiffInput) (*DiffOutput, reply, error) {
	// The changes are paired on the runs' Views; only the entries of
	// the page's changes are read whole. The first changes are b's
	// entries in order, so b's of the page are known before the pairing
	// (keep); a's once it is done: those at the same positions are read
	// whole with a's View (the usual pairing of two runs of the same
	// documents), and a is read again only for others.
	keep := s.pageKeep(in.PageInput)
	a, err := c.st.ManifestSome(in.A, keep)
	if err != nil {
		return nil, reply{}, err
	}
	b, err := c.st.ManifestSome(in.B, keep)
	if err != nil {
		return nil, reply{}, err
	}
	cmp := manifest.CompareViews(&a.View, &b.View)
	from, to, pg, err := s.page("diff "+in.A+" "+in.B, len(cmp.Pairs), in.PageInput)
	if err != nil {
		return nil, reply{}, err
	}
	page := cmp.Pairs[from:to]
	entryA, entryB := keptAt(a.Kept), keptAt(b.Kept)
	inA := map[int]bool{}
	again := false
	for _, p := range page {
		if p.A >= 0 {
			inA[p.A] = true
			again = again || entryA[p.A] == nil
		}
	}
	if again {
		// By its id: the entries are those of the manifest paired.
		if a, err = c.st.ManifestSome(a.ID, func(i int) bool { return inA[i] }); err != nil {
			return nil, reply{}, err
		}
		entryA = keptAt(a.Kept)
	}
	out := &DiffOutput{A: a.ID, B: b.ID, RunA: a.RunID, RunB: b.RunID, Changes: make([]DiffChange, 0, to-from), Page: pg,
		Counts: DiffCounts{Changed: cmp.Changed, Added: cmp.Added, Removed: cmp.Removed, Unchanged: cmp.Unchanged}}
	budget := InlineLimit
	var lines []string
	clean := s.declaredForClient(c.req)
	for _, p := range page {
		ch := manifest.Change{Kind: p.Kind, URI: p.URI, A: entryA[p.A], B: entryB[p.B]}
		dc := DiffChange{Kind: ch.Kind, URI: ch.URI, A: redactEntry(ch.A, clean), B: redactEntry(ch.B, clean)}
		if ch.Kind == manifest.Changed {
			// from the entries as the client reads them: the why line
			// names a moved source's path or URL (session 29), which
			// redactEntry words for the client (before session 30 it
			// named over HTTP the paths the entries hide)
			dc.Why = manifest.Change{Kind: ch.Kind, URI: ch.URI, A: dc.A, B: dc.B}.Why()
			// through text.Printable, as the CLI prints it: quoted whole
			// when a source's revision holds a control character (a line
			// break in it began a line of its own in the text, which
			// escapeLines escapes line by line)
			lines = append(lines, ch.URI+" changed; "+text.Printable(dc.Why))
			if ch.A.ContentHash != ch.B.ContentHash {
				ab, err := c.st.Content(ch.A.Snapshot)
				if err != nil {
					return nil, reply{}, fmt.Errorf("diff: %s in %s: %w", ch.URI, a.RunID, err)
				}
				bb, err := c.st.Content(ch.B.Snapshot)
				if err != nil {
					return nil, reply{}, fmt.Errorf("diff: %s in %s: %w", ch.URI, b.RunID, err)
				}
				u := manifest.Unified("a/"+ch.A.File, "b/"+ch.B.File, ab, bb, 3)
				if len(u) > budget {
					n := runeCut([]byte(u), budget)
					u = u[:n]
					dc.UnifiedTruncated = true
				}
				budget -= len(u)
				dc.Unified = u
			}
		} else if ch.Kind != manifest.Unchanged {
			lines = append(lines, ch.URI+" "+ch.Kind)
		}
		out.Changes = append(out.Changes, dc)
	}
	text := fmt.Sprintf("%s (%s) → %s (%s): %d changed, %d added, %d removed, %d unchanged.",
		a.RunID, manifest.Short(a.ID), b.RunID, manifest.Short(b.ID), cmp.Changed, cmp.Added, cmp.Removed, cmp.Unchanged)
	if len(lines) > 0 {
		text += "\n" + some(lines, "\n")
	}
	if n := pg.note(len(out.Changes)); n != "" {
		text += "\n" + n[1:]
	}
	return out, reply{text: text}, nil
}

// keptAt maps the positions of entries read whole (manifest.Some's Kept)
// to them.
func keptAt(kept []manifest.Entry) map[int]*manifest.Entry {
	m := make(map[int]*manifest.Entry, len(kept))
	for i := range kept {
		m[kept[i].Position] = &kept[i]
	}
	return m
}

func redactEntry(e *manifest.Entry, clean func(string) string) *manifest.Entry {
	if e == nil {
		return nil
	}
	cp := *e
	cp.Provenance = redactProvenance(cp.Provenance, clean)
	return &cp
}

// ReplayEntry is one replayed entry.
type ReplayEntry struct {
	Position      int    `json:"position"`
	URI           string `json:"uri"`
	Ref           string `json:"ref,omitempty"`
	ExpectedHash  string `json:"expected_hash" jsonschema:"content hash the manifest records"`
	ActualHash    string `json:"actual_hash,omitempty" jsonschema:"hash of the bytes rebuilt from the store"`
	Match         bool   `json:"match"`
	Error         string `json:"error,omitempty"`
	TotalBytes    int64  `json:"total_bytes" jsonschema:"size of the entry's bytes"`
	Encoding      string `json:"encoding,omitempty" jsonschema:"with include_content: text (bytes in content) or base64 (bytes in content_b64)"`
	Content       string `json:"content,omitempty" jsonschema:"with include_content: the replayed text"`
	ContentB64    string `json:"content_b64,omitempty" jsonschema:"with include_content: the replayed bytes in base64"`
	ContentOffset int64  `json:"content_offset,omitempty" jsonschema:"offset of the first returned byte"`
	ContentBytes  int64  `json:"content_bytes,omitempty" jsonschema:"number of bytes returned"`
	Complete      bool   `json:"complete,omitempty" jsonschema:"with include_content: the returned window reaches the end of the entry"`
	NextOffset    int64  `json:"next_offset,omitempty" jsonschema:"offset to pass to continue a window, when not complete"`
}

// ReplayOutput is the outcome of a replay.
type ReplayOutput struct {
	ManifestID string        `json:"manifest_id"`
	RunID      string        `json:"run_id"`
	AllMatch   bool          `json:"all_match" jsonschema:"every entry re-hashes to its recorded content hash"`
	Matched    int           `json:"matched" jsonschema:"entries that reproduce, of the whole run"`
	Entries    []ReplayEntry `json:"entries" jsonschema:"the entries of this page (every entry unless next_entry_offset is set); all_match and matched count the whole run"`
	Notes      []string      `json:"notes,omitempty" jsonschema:"further checks by optional features"`
	Truncated  bool          `json:"truncated" jsonschema:"true when some returned content is a window (max_bytes or offset) rather than every byte"`
	TotalBytes int64         `json:"total_bytes" jsonschema:"bytes of all entries"`
	Page
	Receipt
}

func (s *Server) replay(ctx context.Context, c *call, in ReplayInput) (*ReplayOutput, reply, error) {
	if !in.IncludeContent && (in.Position != nil || in.Offset != 0 || in.MaxBytes != 0) {
		return nil, reply{}, hint.With(errors.New("replay: position, offset and max_bytes select content: they need include_content"), "set include_content to true")
	}
	if in.Offset < 0 || in.MaxBytes < 0 {
		return nil, reply{}, hint.With(fmt.Errorf("replay: offset %d and max_bytes %d must not be negative", in.Offset, in.MaxBytes), "pass 0 or a positive number")
	}
	m, err := c.st.Manifest(in.Target)
	if err != nil {
		return nil, reply{}, err
	}
	if in.Position != nil && (*in.Position < 0 || *in.Position >= len(m.Entries)) {
		return nil, reply{}, hint.With(fmt.Errorf("replay %s: no entry at position %d (the run has %d)", in.Target, *in.Position, len(m.Entries)), "positions count from 0")
	}
	from, to, pg, err := s.page("replay "+in.Target, len(m.Entries), in.PageInput)
	if err != nil {
		return nil, reply{}, err
	}
	if in.Position != nil && in.EntryOffset == 0 && *in.Position >= to {
		// A window of an entry past the first page: the page starts at it.
		pin := in.PageInput
		pin.EntryOffset = *in.Position
		if from, to, pg, err = s.page("replay "+in.Target, len(m.Entries), pin); err != nil {
			return nil, reply{}, err
		}
	}
	if in.Position != nil && (*in.Position < from || *in.Position >= to) {
		page := "the page of " + entrySpan(from, to)
		if from == to {
			page = fmt.Sprintf("the page at entry_offset %d, which lists no entry", from)
		}
		return nil, reply{}, hint.With(fmt.Errorf("replay %s: position %d is not in %s", in.Target, *in.Position, page),
			fmt.Sprintf("pass entry_offset %d with the position", *in.Position))
	}
	// The budget is checked on the manifest's sizes, before a byte is
	// read: a refusal costs no more than the manifest.
	if in.IncludeContent && s.opts.MaxAnswerBytes > 0 {
		if n, entries := windowBytes(m.Entries[from:to], in); n > s.opts.MaxAnswerBytes {
			return nil, reply{}, s.overBudget(fmt.Sprintf("replay %s: include_content would return %d bytes of content (%d entr%s)", in.Target, n, entries, pluralY(entries)),
				fmt.Sprintf("take the content in windows: position (0 to %d) with max_bytes of at most %d, then offset = next_offset until complete is true", len(m.Entries)-1, s.opts.MaxAnswerBytes))
		}
	}
	out := &ReplayOutput{ManifestID: m.ID, RunID: m.RunID, Entries: make([]ReplayEntry, 0, to-from), Page: pg}
	// Every entry is replayed (all_match is the whole run's), in one
	// pass, and only the page's are answered.
	var failed []string
	nfailed := 0
	ahead := s.opts.replayChunk
	if ahead <= 0 {
		ahead = replayChunkBytes
	}
	// an entry's error and the notes are worded for the client
	// (forClient: over HTTP, without the server's paths)
	clean := s.forClient(c.req)
	res, rerr := c.st.ReplayEach(ctx, m, ahead, func(i int, orig *store.ReplayEntry) {
		e := *orig
		e.Error = clean(e.Error)
		me := m.Entries[i]
		out.TotalBytes += me.Bytes
		if !e.Match {
			if nfailed++; nfailed <= summaryItems {
				failed = append(failed, replayFailure(&e))
			}
		}
		if i < from || i >= to {
			return
		}
		re := ReplayEntry{Position: e.Position, URI: e.URI, Ref: e.Ref, ExpectedHash: e.Expected, ActualHash: e.Actual,
			Match: e.Match, Error: e.Error, TotalBytes: me.Bytes}
		if in.IncludeContent && e.Match && (in.Position == nil || *in.Position == e.Position) {
			window(&re, me.ContentType, e.Content, in.Offset, in.MaxBytes)
			if !re.Complete || re.ContentOffset > 0 {
				out.Truncated = true
			}
		}
		out.Entries = append(out.Entries, re)
	})
	if res == nil {
		return nil, reply{}, rerr
	}
	out.AllMatch, out.Matched = res.AllMatch, res.Matched
	notes, err := proofread.ReplayLines(c.st, res)
	for _, n := range notes {
		out.Notes = append(out.Notes, clean(n))
	}
	if err != nil {
		out.AllMatch = false
		out.Notes = append(out.Notes, clean(err.Error()))
	}
	var text string
	if out.AllMatch {
		text = fmt.Sprintf("Replay verified: SHA-256 match for %d/%d entries of run %s (manifest %s), rebuilt from the store alone.",
			res.Matched, len(res.Entries), res.Manifest.RunID, res.Manifest.ID)
	} else {
		text = fmt.Sprintf("REPLAY FAILED for run %s (manifest %s): %d of %d entries reproduce.", res.Manifest.RunID, res.Manifest.ID, res.Matched, len(res.Entries))
		for _, f := range failed {
			text += "\n" + f
		}
		if nfailed > len(failed) {
			text += fmt.Sprintf("\n… and %d more entries that do not reproduce", nfailed-len(failed))
		}
		for _, n := range out.Notes {
			text += "\n" + n
		}
	}
	if in.IncludeContent {
		if out.Truncated {
			text += " Content returned as windows; continue with offset = next_offset."
		} else if out.AllMatch {
			text += " Every byte is in content / content_b64."
		}
	}
	text += pg.note(len(out.Entries))
	return out, reply{text: text, meta: mcp.Meta{"truncated": out.Truncated, "total_bytes": out.TotalBytes, "all_match": out.AllMatch}}, nil
}

// replayFailure is the text line of an entry that does not reproduce.
func replayFailure(e *store.ReplayEntry) string {
	why := e.Error
	if why == "" {
		why = "bytes hash to " + e.Actual + ", manifest records " + e.Expected
	}
	return fmt.Sprintf("[%d] %s: %s", e.Position, e.URI, why)
}

// replayChunkBytes is how many of a run's recorded bytes a replay reads
// ahead of the entry it answers (Options.replayChunk when set): the blobs
// of the largest entries read ahead at once are at most this many bytes.
// The result keeps an entry's bytes only while it is answered (and those
// of probed entries: proofread.ReplayLines derives the delivered hash
// again from them): a replay holds about this many bytes of a run, not all
// of them. Before session 22, every entry's bytes were held until the
// answer was built: a write token's run of a 1 MiB document mounted 200
// times (one blob in the store) made any read token's replay of it, with
// no content asked for, hold 200 MiB. Until session 23 the run was
// replayed in chunks of this many bytes, the run's tree listed again for
// each; now in one pass (store.ReplayEach).
const replayChunkBytes = 16 << 20

// windowBytes is how many content bytes replay would return for in, from
// the manifest's recorded sizes (at most, since only entries that replay
// carry content), and over how many entries.
func windowBytes(page []manifest.Entry, in ReplayInput) (n int64, entries int) {
	for _, e := range page {
		if in.Position != nil && *in.Position != e.Position {
			continue
		}
		w := max(e.Bytes-in.Offset, 0)
		if in.MaxBytes > 0 && in.MaxBytes < w {
			w = in.MaxBytes
		}
		n += w
		entries++
	}
	return n, entries
}

// overBudget is the tool error of a call whose answer would carry more
// document bytes than Options.MaxAnswerBytes.
func (s *Server) overBudget(what, how string) error {
	return hint.With(fmt.Errorf("%s: over this server's budget of %d bytes per answer (the operator's --max-answer): refused before reading them", what, s.opts.MaxAnswerBytes), how)
}

// window fills re with content[offset : offset+max] (all when max is 0),
// as text when the entry is text and the window is valid UTF-8, else base64.
func window(re *ReplayEntry, contentType string, content []byte, offset, max int64) {
	total := int64(len(content))
	if offset > total {
		offset = total
	}
	end := total
	// max < total-offset, not offset+max < total: max may be near 2^63,
	// and the sum overflowed to a negative end (a panic that ended the
	// server).
	if max > 0 && max < total-offset {
		end = offset + max
	}
	text := IsText(contentType, content)
	if text && end < total {
		cut := int64(runeCut(content[offset:], int(end-offset)))
		if cut > 0 {
			end = offset + cut
		}
	}
	part := content[offset:end]
	if text && utf8.Valid(part) && (offset == 0 || offset == total || utf8.RuneStart(content[offset])) {
		re.Encoding, re.Content = "text", string(part)
	} else {
		re.Encoding, re.ContentB64 = "base64", b64(part)
	}
	re.ContentOffset, re.ContentBytes = offset, int64(len(part))
	re.Complete = end == total
	if !re.Complete {
		re.NextOffset = end
	}
}
