package store

// Replaying a run: its bytes rebuilt from the store alone, every hash
// checked again.

import (
	"bytes"
	"context"
	"fmt"
	"runtime"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/manifest"
)

// ReplayEntry is the outcome of re-reading one entry from the store.
type ReplayEntry struct {
	Position int    `json:"position"`
	URI      string `json:"uri"`
	Ref      string `json:"ref,omitempty"`
	Expected string `json:"expected_hash"`
	Actual   string `json:"actual_hash,omitempty"`
	Match    bool   `json:"match"`
	Error    string `json:"error,omitempty"`
	// Err is the error Error says, for errors.Is (a read the system
	// refused is told from damage: CouldNotRead).
	Err     error  `json:"-"`
	Content []byte `json:"-"`
}

// ReplayResult is the outcome of Replay.
type ReplayResult struct {
	Manifest *manifest.Manifest `json:"-"`
	Entries  []ReplayEntry      `json:"entries"`
	AllMatch bool               `json:"all_match"`
	Matched  int                `json:"matched"`
	// spans are the entries' bytes in order, as few slices as possible
	// (Spans); nil: one an entry.
	spans [][]byte
}

// Spans is the bytes of every entry, in position order (the entries'
// Content one after the other), in as few slices as possible: a replay that
// keeps every entry's bytes reads them one after the other into one
// allocation, which a writer then takes in one piece rather than copied
// through a buffer entry by entry.
func (r *ReplayResult) Spans() [][]byte {
	if r.spans != nil {
		return r.spans
	}
	out := make([][]byte, 0, len(r.Entries))
	for _, en := range r.Entries {
		if len(en.Content) > 0 {
			out = append(out, en.Content)
		}
	}
	return out
}

// Replay rebuilds a manifest's bytes from the store alone and re-hashes
// every entry. A missing or altered object is a mismatch, never an error of
// the call: the result says which entries failed. It returns ErrMismatch
// (wrapped) when any entry fails.
func (s *Store) Replay(target string) (*ReplayResult, error) {
	return s.ReplayContext(context.Background(), target, nil)
}

// ReplayContext is Replay that stops with ctx's error (and no result) when
// ctx ends, checked before each entry, and reports each entry done to
// progress (nil: none) as (done, total).
func (s *Store) ReplayContext(ctx context.Context, target string, progress func(done, total int)) (*ReplayResult, error) {
	m, err := s.Manifest(target)
	if err != nil {
		return nil, err
	}
	return s.ReplayManifestContext(ctx, m, progress)
}

// ReplayNoContentContext is ReplayContext for a caller that does not
// print the bytes (`replay --no-content`, `replay --json`): only entries
// with a probe record keep their Content, which proof of read re-derives
// the delivered bytes from (proofread.ReplayLines); every other entry's
// is nil, its blob dropped once hashed.
func (s *Store) ReplayNoContentContext(ctx context.Context, target string, progress func(done, total int)) (*ReplayResult, error) {
	m, err := s.Manifest(target)
	if err != nil {
		return nil, err
	}
	return s.replayManifest(ctx, m, progress, keepProbed)
}

// ReplayManifest is Replay for a manifest already read with Manifest.
func (s *Store) ReplayManifest(m *manifest.Manifest) (*ReplayResult, error) {
	return s.ReplayManifestContext(context.Background(), m, nil)
}

// ReplayManifestContext is ReplayManifest with ReplayContext's ctx and
// progress.
//
// The blobs are read with gitstore.ReadBlobs, on every core, and each is
// hashed (SHA-256) on the worker that read it. The SHA-256 the manifest
// records covers the same bytes as git's SHA-1 of the blob, so the SHA-1
// is not computed again for each blob (ContentChecked): only bytes whose
// SHA-256 differs are checked against their id (gitstore.VerifyBlob), so a
// corrupt object is still reported with the error reading it gives. Loose
// objects also have their zlib checksum and end checked as git fsck does
// (CheckLoose), in the same pass.
func (s *Store) ReplayManifestContext(ctx context.Context, m *manifest.Manifest, progress func(done, total int)) (*ReplayResult, error) {
	return s.replayManifest(ctx, m, progress, keepAll)
}

// replayKeep says which entries' bytes a replay keeps in their Content.
type replayKeep int

const (
	keepNone   replayKeep = iota // none: each blob dropped once hashed
	keepProbed                   // those of entries with a probe record (a copy of each)
	keepAll                      // every entry's
)

// replayManifest is ReplayManifestContext that keeps the bytes of the
// entries keep says in their Content. The others' is left nil, each blob
// dropped once hashed (evidence verify needs only the hashes, and 10,000
// blobs of 4 KiB kept until the end of the replay were 40 MB of its
// heap). Unless it keeps every entry's bytes, the blobs are read into
// buffers ReadBlobs reuses (ReuseBuffers: nothing below keeps data, or a
// slice of it, past the callback but a copy; the hashes are strings of
// their own), which spares the allocation of every blob's bytes.
func (s *Store) replayManifest(ctx context.Context, m *manifest.Manifest, progress func(done, total int), keep replayKeep) (*ReplayResult, error) {
	return s.replayEach(ctx, m, progress, keep, 0, nil)
}

// ReplayEach is ReplayNoContentContext for a manifest already read, for a
// reader that looks at each entry once, as it is replayed, in one pass
// over the run (a page of the MCP tool readproof_replay): each is called
// with every entry, in position order, with the entry's bytes in
// r.Content when they were read (valid only during the call: ReadBlobs
// reuses its buffers, so a reader that keeps them copies them). The
// result keeps the bytes of probed entries only, as
// ReplayNoContentContext's does. Read-ahead holds at most about ahead
// bytes of the entries' recorded sizes (0: ReadBlobs' default), so one
// pass holds about that much of a run of large entries, besides what
// each keeps.
func (s *Store) ReplayEach(ctx context.Context, m *manifest.Manifest, ahead int64, each func(i int, r *ReplayEntry)) (*ReplayResult, error) {
	return s.replayEach(ctx, m, nil, keepProbed, ahead, each)
}

// replayEach is replayManifest, and ReplayEach when each is set.
func (s *Store) replayEach(ctx context.Context, m *manifest.Manifest, progress func(done, total int), keep replayKeep, ahead int64, each func(i int, r *ReplayEntry)) (*ReplayResult, error) {
	c, err := s.git.Commit(gitstore.OID(m.ID))
	if err != nil {
		return nil, err
	}
	res := &ReplayResult{Manifest: m, AllMatch: true, Entries: make([]ReplayEntry, 0, len(m.Entries))}
	files := map[string]gitstore.OID{}
	treeErr := s.listFiles(c.Tree, "", files)
	ids := make([]gitstore.OID, len(m.Entries))
	for i, e := range m.Entries {
		ids[i] = gitstore.OID(e.Snapshot)
	}
	hashes := make([]string, len(ids))
	var slab []byte
	var offs []int64
	var into func(i int) []byte
	if keep == keepAll {
		slab, offs = slabFor(m.Entries)
	}
	if slab != nil {
		into = func(i int) []byte { return slab[offs[i] : offs[i] : offs[i]+m.Entries[i].Bytes] }
	}
	opts := gitstore.BlobsOptions{
		Into:           into,
		ContentChecked: true,
		CheckLoose:     true,
		ReuseBuffers:   keep != keepAll,
		OnRead:         func(i int, data []byte) { hashes[i] = contentHash(data) },
	}
	if ahead > 0 {
		var largest int64
		for _, e := range m.Entries {
			largest = max(largest, e.Bytes)
		}
		// Fewer blobs than ReadBlobs' default read-ahead (32 per
		// worker) only when that many of the largest would exceed
		// ahead bytes; and no more workers than blobs: each reads
		// ahead a chunk of its own whatever Ahead says (one worker per
		// CPU held a blob each over the bound).
		workers := runtime.GOMAXPROCS(0)
		if n := max(ahead/max(largest, 1), 1); n < int64(32*workers) {
			opts.Ahead = int(n)
			opts.Workers = int(min(n, int64(workers)))
		}
	}
	err = gitstore.ReadBlobs(ctx, s.objects(), ids, opts, func(i int, data []byte, err error) error {
		if progress != nil {
			progress(i, len(m.Entries))
		}
		e := m.Entries[i]
		r := ReplayEntry{Position: e.Position, URI: e.URI, Ref: e.Ref, Expected: e.ContentHash}
		if err == nil && hashes[i] != e.ContentHash {
			// Not the recorded bytes: a corrupt object is reported as such.
			err = gitstore.VerifyBlob(ids[i], data)
		}
		if err == nil && e.File != "" {
			switch inTree, ok := files[e.File]; {
			case treeErr != nil:
				err = fmt.Errorf("manifest tree: %w", treeErr)
			case !ok:
				err = fmt.Errorf("tree file %s is missing", e.File)
			case inTree != gitstore.OID(e.Snapshot):
				err = fmt.Errorf("tree file %s is %s, entry records snapshot %s", e.File, inTree, e.Snapshot)
			}
		}
		var read []byte // the bytes, when read and in the tree
		if err != nil {
			r.Error, r.Err = err.Error(), err
		} else {
			read = data
			r.Actual = hashes[i]
			switch {
			case keep == keepAll:
				r.Content = data
			case keep == keepProbed && e.Probe != nil:
				r.Content = bytes.Clone(data) // data is ReadBlobs' buffer
			}
			if r.Content == nil && (keep == keepAll || e.Probe != nil && keep == keepProbed) {
				// kept and empty: not nil, which says "not kept" (an
				// empty blob is read as nil when no buffer was given)
				r.Content = []byte{}
			}
			r.Match = r.Actual == e.ContentHash && int64(len(data)) == e.Bytes
			if r.Actual == e.ContentHash && !r.Match {
				r.Error = fmt.Sprintf("size %d, entry records %d", len(data), e.Bytes)
			}
		}
		if r.Match {
			res.Matched++
		} else {
			res.AllMatch = false
		}
		if each != nil {
			seen := r
			seen.Content = read // as keepAll gives them
			each(i, &seen)
		}
		res.Entries = append(res.Entries, r)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if progress != nil {
		progress(len(m.Entries), len(m.Entries))
	}
	if slab != nil {
		res.spans = spansOf(res.Entries, slab, offs)
	}
	if !res.AllMatch {
		return res, hint.With(fmt.Errorf("manifest %s: %d of %d entries do not reproduce: %w", m.ID, len(m.Entries)-res.Matched, len(m.Entries), ErrMismatch),
			"the FAIL lines name each entry; `readproof verify --read-data` checks the whole store; restore the objects from a clone (readproof pull) or a backup")
	}
	return res, nil
}

// slabFor is the memory a replay that keeps every entry's bytes reads them
// into (ReadBlobs' Into): one allocation at the size the entries record,
// entry i's place at offs[i], instead of one allocation a blob, its pages
// faulted in at once (populate) rather than one by one as the blobs are
// written. A blob of another size than recorded is read into memory of its
// own. nil when the recorded sizes are not usable: negative, or more than
// maxSlab in all (a larger run reads as before, a blob at a time, and a
// damaged manifest cannot make replay take more than maxSlab at once).
func slabFor(entries []manifest.Entry) (slab []byte, offs []int64) {
	var total int64
	offs = make([]int64, len(entries))
	for i, e := range entries {
		if e.Bytes < 0 || e.Bytes > maxSlab-total {
			return nil, nil
		}
		offs[i] = total
		total += e.Bytes
	}
	if total == 0 {
		return nil, nil
	}
	slab = make([]byte, total)
	populate(slab)
	return slab, offs
}

// maxSlab bounds slabFor's allocation.
const maxSlab = 64 << 20

// spansOf is entries' bytes as ReplayResult.Spans gives them: the entries
// read into their places in slab, one after the other, are one slice of it.
func spansOf(entries []ReplayEntry, slab []byte, offs []int64) [][]byte {
	var out [][]byte
	start, end := int64(-1), int64(-1) // the span of slab being extended
	for i, en := range entries {
		if len(en.Content) == 0 {
			continue
		}
		at := offs[i]
		inPlace := at < int64(len(slab)) && &en.Content[0] == &slab[at]
		if inPlace && at == end {
			end += int64(len(en.Content))
			continue
		}
		if start >= 0 {
			out = append(out, slab[start:end:end])
			start, end = -1, -1
		}
		if inPlace {
			start, end = at, at+int64(len(en.Content))
			continue
		}
		out = append(out, en.Content)
	}
	if start >= 0 {
		out = append(out, slab[start:end:end])
	}
	if out == nil {
		out = [][]byte{}
	}
	return out
}
