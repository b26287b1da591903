package evidence

import (
	"bytes"
	"crypto/sha1"
	"runtime"
	"sync"
)

// early is the work Verify starts while the fast decoder is still reading
// a bundle: each entry's content check as soon as the entry is decoded,
// and the store replay as soon as manifest_id is. Its results are used only
// for the statement the decoder then returns, and only where they are
// about exactly what that statement holds (the same entry, the same
// manifest id); otherwise the checks run afterwards as before. Every
// goroutine it starts has ended when wait returns.
type early struct {
	store Replayer // nil: no replay (offline)

	entries chan earlyEntry
	workers sync.WaitGroup
	results [][]earlyCheck // one list per worker

	replayID  string
	replayed  []ReplayEntry
	replayErr error
	replay    sync.WaitGroup
	replaying bool
}

type earlyEntry struct {
	i int
	e BundleEntry // its content_b64 in b64, a slice of the decoded input
}

type earlyCheck struct {
	i int
	e BundleEntry // what was checked
	c Check
}

func newEarly(store Replayer) *early {
	return &early{store: store}
}

// entry is the decoder's hook for entry i, complete: the text of its
// content_b64 is e.b64, a slice of the input.
func (x *early) entry(i int, e *BundleEntry) {
	if len(e.b64) == 0 {
		return
	}
	if x.entries == nil {
		n := runtime.GOMAXPROCS(0)
		x.entries = make(chan earlyEntry, 64*n)
		x.results = make([][]earlyCheck, n)
		for w := 0; w < n; w++ {
			x.workers.Add(1)
			go func() {
				defer x.workers.Done()
				c := contentChecker{sha1: sha1.New()}
				for it := range x.entries {
					x.results[w] = append(x.results[w], earlyCheck{i: it.i, e: it.e, c: c.checkB64(it.i, &it.e, it.e.b64)})
				}
			}()
		}
	}
	x.entries <- earlyEntry{i: i, e: *e}
}

// manifestID is the decoder's hook for predicate.manifest_id.
func (x *early) manifestID(id string) {
	if x.store == nil || x.replaying {
		return
	}
	x.replaying, x.replayID = true, id
	x.replay.Add(1)
	go func() {
		defer x.replay.Done()
		x.replayed, x.replayErr = x.store.ReplayHashes(id)
	}()
}

// wait ends the content workers and the replay.
func (x *early) wait() {
	if x.entries != nil {
		close(x.entries)
		x.workers.Wait()
		x.entries = nil
	}
	x.replay.Wait()
}

// contents returns the content checks of entries, in order, as
// checkContents computes them, from the early results where they are about
// the same entry.
func (x *early) contents(entries []BundleEntry) []Check {
	x.wait()
	var done []*earlyCheck
	for w := range x.results {
		for k := range x.results[w] {
			ec := &x.results[w][k]
			if ec.i < len(entries) {
				if done == nil {
					done = make([]*earlyCheck, len(entries))
				}
				done[ec.i] = ec
			}
		}
	}
	if done == nil {
		return checkContents(entries)
	}
	var out []Check
	c := contentChecker{sha1: sha1.New()}
	for i := range entries {
		e := &entries[i]
		if !e.hasContent() {
			continue
		}
		if ec := done[i]; ec != nil && sameEntry(&ec.e, e) {
			out = append(out, ec.c)
		} else {
			out = append(out, c.check(i, e))
		}
	}
	return out
}

// sameEntry compares the fields a content check reads. The text of
// content_b64 is compared wherever a decoder left it: the fast decoder in
// b64, encoding/json (which decodes the bundle again when the fast one
// gives up part way) in ContentB64.
func sameEntry(a, b *BundleEntry) bool {
	return a.URI == b.URI && sameB64(a, b) && a.ContentHash == b.ContentHash &&
		a.Bytes == b.Bytes && a.SnapshotID == b.SnapshotID
}

// sameB64 compares the text of a's and b's content_b64, each in b64 or
// ContentB64 (a decoder fills one of them), without a copy.
func sameB64(a, b *BundleEntry) bool {
	switch {
	case len(a.b64) > 0 && len(b.b64) > 0:
		return bytes.Equal(a.b64, b.b64)
	case len(a.b64) > 0:
		return string(a.b64) == b.ContentB64
	case len(b.b64) > 0:
		return a.ContentB64 == string(b.b64)
	}
	return a.ContentB64 == b.ContentB64
}

// replayHashes is store.ReplayHashes(id), from the early replay when it
// was started for id.
func (x *early) replayHashes(store Replayer, id string) ([]ReplayEntry, error) {
	x.wait()
	if x.replaying && x.replayID == id {
		return x.replayed, x.replayErr
	}
	return store.ReplayHashes(id)
}
