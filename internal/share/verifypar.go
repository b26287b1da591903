package share

import (
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/manifest"
)

// maxVerifyWorkers bounds the goroutines that check manifests: each reads
// through its own handle on the repository, and git objects are small, so
// more than a few buys nothing but memory.
const maxVerifyWorkers = 4

// recordsRun + ID is the kind under which verifyManifests remembers that a
// manifest it verified records run ID (checkRunNames).
const recordsRun = "records run "

// verifyManifests checks every manifest in ids that has not passed yet
// (checkManifest: the manifest entry by entry, each snapshot hashed) on
// one goroutine per core, each reading through its own repository handle,
// and returns the failures in the order of ids. Progress is reported by
// the workers, one at a time, and its last line by the calling goroutine.
func verifyManifests(g gitstore.Store, ids []gitstore.OID, verified verifiedSet, opts Options) []string {
	var todo []gitstore.OID
	for _, id := range ids {
		if !verified[verifiedKey{"manifest", id}] {
			todo = append(todo, id)
		}
	}
	errs := make([]error, len(todo))
	runIDs := make([]string, len(todo))
	readers := []gitstore.Store{g}
	workers := min(runtime.GOMAXPROCS(0), maxVerifyWorkers, 1+len(todo)/64)
	for len(readers) < workers {
		h, ok, err := gitstore.NewReader(g)
		if err != nil || !ok {
			break // g alone: slower, not less checked
		}
		defer h.Close()
		readers = append(readers, h)
	}
	facts := &snapshotFacts{m: map[string]snapshotFact{}}
	// Each worker takes the next manifest by an atomic count: a channel
	// handing out one job at a time woke a goroutine per manifest.
	var next, checked atomic.Int64
	var meter sync.Mutex // the progress line, written by the workers
	shown := 0
	var wg sync.WaitGroup
	for _, r := range readers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return
				}
				var m *manifest.Manifest
				if m, errs[i] = checkManifestWith(r, todo[i], facts); m != nil {
					runIDs[i] = m.RunID
				}
				if n := int(checked.Add(1)); opts.Progress != nil && n%100 == 1 && n < len(todo) {
					meter.Lock()
					if n > shown { // never a count below one shown
						shown = n
						opts.say("\rVerifying manifests: %d/%d", n, len(todo))
					}
					meter.Unlock()
				}
			}
		})
	}
	wg.Wait()
	if opts.Progress != nil && len(todo) > 0 {
		opts.say("\rVerifying manifests: %d/%d, done.\n", len(todo), len(todo))
	}
	var failures []string
	for i, id := range todo {
		if errs[i] != nil {
			failures = append(failures, errs[i].Error())
		} else {
			verified[verifiedKey{"manifest", id}] = true
			verified[verifiedKey{recordsRun + runIDs[i], id}] = true
		}
	}
	return failures
}

// snapshotFacts remembers what each snapshot blob read so far hashes to
// and how long it is, and the entries of the subtrees read so far (up to
// maxSharedTrees of them). Safe for concurrent use.
type snapshotFacts struct {
	mu    sync.Mutex
	m     map[string]snapshotFact
	trees map[gitstore.OID][]gitstore.TreeEntry
}

// maxSharedTrees bounds the subtrees one verification keeps (a few MB).
const maxSharedTrees = 1 << 14

func (f *snapshotFacts) tree(id gitstore.OID) ([]gitstore.TreeEntry, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	t, ok := f.trees[id]
	return t, ok
}

func (f *snapshotFacts) keepTree(id gitstore.OID, t []gitstore.TreeEntry) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.trees == nil {
		f.trees = map[gitstore.OID][]gitstore.TreeEntry{}
	}
	if len(f.trees) < maxSharedTrees {
		f.trees[id] = t
	}
}

type snapshotFact struct {
	hash string
	size int64
}

// check is checkBlob, reading and hashing each snapshot once. A nil
// *snapshotFacts reads every time.
func (f *snapshotFacts) check(g gitstore.Store, snapshot, hash string, size int64) error {
	if f == nil {
		return checkBlob(g, snapshot, hash, size)
	}
	f.mu.Lock()
	got, ok := f.m[snapshot]
	f.mu.Unlock()
	if !ok {
		var err error
		if got, err = readSnapshotFact(g, snapshot, size); err != nil {
			return err
		}
		f.mu.Lock()
		f.m[snapshot] = got
		f.mu.Unlock()
	}
	return got.match(snapshot, hash, size)
}

// snapshotSlack is how much larger than its record says a snapshot is read
// (and hashed, so the refusal names what it hashes to) before it is refused
// by its size alone.
const snapshotSlack = 1 << 20

// readSnapshotFact hashes a snapshot blob as it is inflated (gitstore's
// BlobTo), holding none of it whole: a tag move records no size, so a
// remote's move naming a blob of gigabytes (a few megabytes on the wire)
// is hashed within a few buffers and refused by its hash. A blob more than
// snapshotSlack larger than size, the size its record gives (< 0: none),
// is refused from its header, unread, and so is one over
// store.MaxSnapshotBytes: a remote's record of a few bytes cannot make a
// pull inflate a blob of gigabytes to learn that it differs.
func readSnapshotFact(g gitstore.Store, snapshot string, size int64) (snapshotFact, error) {
	max := int64(store.MaxSnapshotBytes)
	if size >= 0 {
		max = min(size, max-snapshotSlack) + snapshotSlack
	}
	hash, n, err := store.HashBlob(g, gitstore.OID(snapshot), max)
	if err != nil {
		return snapshotFact{}, fmt.Errorf("snapshot %s: %w", snapshot, err)
	}
	return snapshotFact{hash: hash, size: n}, nil
}

// match compares what a snapshot hashes to with a recorded content hash
// and size (size < 0: not recorded).
func (got snapshotFact) match(snapshot, hash string, size int64) error {
	if got.hash != hash {
		return fmt.Errorf("snapshot %s hashes to %s, recorded %s", snapshot, got.hash, hash)
	}
	if size >= 0 && got.size != size {
		return fmt.Errorf("snapshot %s has %d bytes, recorded %d", snapshot, got.size, size)
	}
	return nil
}
