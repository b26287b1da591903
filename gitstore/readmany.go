package gitstore

// Reading many blobs at once, on several cores. A repo's object reader
// (odb) is not safe for concurrent use: its inflater, base cache and open
// packs are shared, and the repo's mutex serializes every read. ReadBlobs
// gives each worker goroutine an object reader of its own over the same
// object directory (its own mapped indexes, packs, cache and inflater), so
// workers share nothing but the read-only files, and hands the blobs to the
// caller in the order asked for. Anything a worker's reader cannot answer
// by itself (a miss, a pack removed by a concurrent gc, an alternate, a
// corrupt object) is read again through the repo, under its mutex, so the
// result and the error are exactly Blob's.

import (
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/readproof/readproof/internal/hint"
)

// BlobsOptions tune ReadBlobs. The zero value reads on GOMAXPROCS workers
// and checks every blob as Blob does.
type BlobsOptions struct {
	// Workers is how many goroutines read (0: runtime.GOMAXPROCS(0)).
	Workers int
	// Ahead bounds how many blobs may be read and held before fn has taken
	// them (0: 32 per worker; at least one chunk per worker: blobs are
	// handed over in chunks of up to 32), which bounds the memory held
	// besides what fn keeps.
	Ahead int
	// OnRead, when set, is called on the worker goroutine that read blob i,
	// right after reading it and only when it was read without error, with
	// its bytes: per-blob work the caller wants spread over the workers too
	// (hashing, say). Calls for different blobs run concurrently; each i is
	// seen once. fn then sees the same bytes, in order.
	OnRead func(i int, data []byte)
	// ContentChecked says the caller checks every blob's bytes against a
	// hash of its own that covers the same bytes (a manifest's SHA-256, for
	// example), so the SHA-1 of each blob is not computed again against its
	// id. The caller must then pass bytes that fail its own check to
	// VerifyBlob, which gives the error Blob would have given for a corrupt
	// object.
	ContentChecked bool
	// CheckLoose also checks, for a blob stored as a loose object, what
	// reading its content stops short of: that the zlib stream ends with
	// its Adler-32 checksum and nothing follows it (CheckLooseObject's
	// check, made on the bytes already read). Its error is given as the
	// blob's error.
	CheckLoose bool
	// ReuseBuffers lets ReadBlobs read blobs into buffers it reuses, for a
	// caller that keeps none of the bytes (it hashes, compares or writes
	// them out and returns): the data OnRead and fn are given for blob i
	// is then valid only until fn(i, ...) returns, and is overwritten by
	// a later blob's bytes after that. A caller that keeps data, or any
	// slice of it, past that call must copy it first. Each place of the
	// read-ahead ring keeps its own buffer, so workers never share one; a
	// blob larger than reuseMax is read into a buffer of its own, not kept
	// for reuse.
	ReuseBuffers bool
	// Into, when set, gives the memory blob i is read into: its bytes are
	// then Into(i)[:n] when n, their size, is at most cap(Into(i)), and
	// memory of their own otherwise; nothing is written past that cap. A
	// caller that keeps every blob gives each its place in one allocation
	// (store's replay) instead of one allocation a blob. Not with
	// ReuseBuffers.
	Into func(i int) []byte
}

// reuseMax is the largest buffer ReadBlobs keeps for reuse with
// ReuseBuffers: with the default read-ahead on two workers, 64 places of
// the ring, the buffers kept are at most 8 MiB.
const reuseMax = 128 << 10

// ReadBlobs reads the blobs ids names and calls fn(i, data, err) for each,
// in the order of ids, on the calling goroutine. err is the error Blob
// would return for ids[i] (or CheckLooseObject's, with opts.CheckLoose);
// data is then nil. Reading runs ahead of fn on opts.Workers goroutines
// when g is a repository opened by Open or Init; any other Reader is read
// one blob after the other through its Blob. ReadBlobs stops at the first
// error fn returns, or when ctx ends, and returns that error; it returns
// once no worker is running. data is fn's own, unless opts.ReuseBuffers
// says otherwise.
//
// It is safe to use g from other goroutines meanwhile; objects written
// through g and not yet flushed are read through g.
func ReadBlobs(ctx context.Context, g Reader, ids []OID, opts BlobsOptions, fn func(i int, data []byte, err error) error) error {
	if s, ok := g.(*repo); ok {
		return s.readBlobs(ctx, ids, opts, fn)
	}
	for i, id := range ids {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := g.Blob(id)
		if err == nil && opts.CheckLoose {
			err = CheckLooseObject(g.Path(), id)
		}
		if err != nil {
			data = nil
		} else if opts.OnRead != nil {
			opts.OnRead(i, data)
		}
		if err := fn(i, data, err); err != nil {
			return err
		}
	}
	return nil
}

// VerifyBlob checks that data is the content of the blob id, and returns
// the error Blob gives for an object whose content does not match its id
// (wrapping ErrCorrupt) when it is not. For callers of ReadBlobs with
// ContentChecked.
func VerifyBlob(id OID, data []byte) error {
	h, err := parseOID(id)
	if err != nil {
		return err
	}
	if objectHash(plumbing.BlobObject, data) != h {
		return errContentMismatch(id)
	}
	return nil
}

// errContentMismatch is readObject's error for content that does not hash
// to its id.
func errContentMismatch(id OID) error {
	return hint.With(fmt.Errorf("read object %s: %w: content does not match its id: the store was modified outside git; run git fsck", id, ErrCorrupt), damagedObjectHint)
}

// damagedObjectHint is the hint of an object that does not read back as
// written (its bytes changed, a pack entry that does not inflate).
const damagedObjectHint = "`readproof verify` names what the damaged object breaks; restore it from a clone (readproof pull) or a backup (`git fsck` on the store lists every damaged object)"

// CheckLooseObject checks git's own integrity of the loose object file of
// id in the repository gitDir, as `git fsck` does: the whole zlib stream
// decompresses and its Adler-32 checksum matches, nothing follows it, and
// the SHA-1 of the decompressed object is id. Reading an object's content
// stops at its end and so never sees a flipped checksum byte. An object
// that is not loose (packed, or missing) gives nil; errors wrap
// ErrCorrupt, or are I/O errors.
func CheckLooseObject(gitDir string, id OID) error {
	if len(id) != 40 {
		return nil
	}
	raw, err := readLooseFile(filepath.Join(gitDir, "objects", string(id[:2]), string(id[2:])))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	br := bytes.NewReader(raw)
	zr, err := zlib.NewReader(br)
	if err != nil {
		return fmt.Errorf("loose object %s: %w: %v", id, ErrCorrupt, err)
	}
	h := sha1.New()
	if _, err := io.Copy(h, zr); err != nil {
		return fmt.Errorf("loose object %s: %w: %v (git fsck reports the same)", id, ErrCorrupt, err)
	}
	if err := zr.Close(); err != nil {
		return fmt.Errorf("loose object %s: %w: %v", id, ErrCorrupt, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != string(id) {
		return fmt.Errorf("loose object %s: %w: its content hashes to %s", id, ErrCorrupt, got)
	}
	if br.Len() > 0 {
		return fmt.Errorf("loose object %s: %w: %d bytes follow the compressed object", id, ErrCorrupt, br.Len())
	}
	return nil
}

// looseStreamEnd reads zr, the inflater of a loose object file held in br,
// to the end of its stream (zlib checks the Adler-32 checksum there), and
// checks that nothing follows the stream in the file.
func looseStreamEnd(id string, zr io.Reader, br *bytes.Reader) error {
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return fmt.Errorf("loose object %s: %w: %v (git fsck reports the same)", id, ErrCorrupt, err)
	}
	if br.Len() > 0 {
		return fmt.Errorf("loose object %s: %w: %d bytes follow the compressed object", id, ErrCorrupt, br.Len())
	}
	return nil
}

// readBlobs is ReadBlobs for a repository.
func (s *repo) readBlobs(ctx context.Context, ids []OID, opts BlobsOptions, fn func(i int, data []byte, err error) error) error {
	s.mu.Lock()
	own := !s.closed && s.bufCount() == 0
	dir := s.st.dir
	s.mu.Unlock()
	workers := opts.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(ids))
	var fan *[256]bool
	if own && opts.CheckLoose {
		fan = looseFanout(dir)
	}
	if !own || workers <= 1 {
		// One at a time, on this goroutine: through the repo itself when
		// it holds objects not flushed yet (or is closed), else through a
		// reader of its own.
		var r *blobReader
		if own {
			r = newBlobReader(s, dir, opts, 1, fan)
			defer r.close()
		}
		var buf []byte // with ReuseBuffers: the last blob's memory
		for i, id := range ids {
			if err := ctx.Err(); err != nil {
				return err
			}
			var data []byte
			var mine bool
			var err error
			if r != nil {
				if opts.Into != nil {
					buf = opts.Into(i)[:0]
				}
				data, mine, err = r.read(id, buf)
			} else {
				data, err = s.blobChecked(id, opts.CheckLoose)
			}
			if err == nil && opts.OnRead != nil {
				opts.OnRead(i, data)
			}
			if err := fn(i, data, err); err != nil {
				return err
			}
			buf = reusable(opts, buf, data, mine)
		}
		return nil
	}
	ahead := opts.Ahead
	if ahead <= 0 {
		ahead = 32 * workers
	}
	// Blobs are handed out and handed back in chunks of consecutive ones,
	// so that the goroutines wait for each other (and, on a busy machine,
	// for the scheduler) once per chunk rather than once per blob.
	chunk := max(1, min(32, ahead/(2*workers), len(ids)/(4*workers)))
	nchunks := (len(ids) + chunk - 1) / chunk
	ring := max(ahead/chunk, workers)
	// A ring of ring chunk places: chunk c goes to place c%ring. A worker
	// takes a token before it claims the next chunk, and fn's side gives a
	// token back once it has taken a chunk's blobs, so at most ring chunks
	// are between the workers and fn, and a place is free again before the
	// chunk ring places after it is claimed (chunks are claimed in order).
	type slot struct {
		data []byte
		err  error
		buf  []byte // with ReuseBuffers: this place's memory, kept
	}
	slots := make([]slot, ring*chunk)
	ready := make([]chan struct{}, ring)
	for i := range ready {
		ready[i] = make(chan struct{}, 1)
	}
	tokens := make(chan struct{}, ring)
	for range ring {
		tokens <- struct{}{}
	}
	var next atomic.Int64
	// readChunk claims the next chunk and reads it with r into its place;
	// false when every chunk is claimed. The caller holds a token.
	readChunk := func(r *blobReader) bool {
		c := int(next.Add(1) - 1)
		if c >= nchunks {
			return false
		}
		place := slots[c%ring*chunk:][:chunk]
		for k, i := 0, c*chunk; k < chunk && i < len(ids); k, i = k+1, i+1 {
			// place[k].buf is free: fn returned for the blob that was
			// here before the token this chunk was claimed with came back.
			buf := place[k].buf
			if opts.Into != nil {
				buf = opts.Into(i)[:0]
			}
			data, mine, err := r.read(ids[i], buf)
			if err == nil && opts.OnRead != nil {
				opts.OnRead(i, data)
			}
			place[k] = slot{data, err, reusable(opts, buf, data, mine)}
		}
		ready[c%ring] <- struct{}{}
		return true
	}
	// workers-1 goroutines read; the calling goroutine is the last worker:
	// while the chunk fn needs next is not read yet, it reads the next
	// unclaimed one itself rather than wait.
	quit := make(chan struct{})
	var wg sync.WaitGroup
	for range workers - 1 {
		wg.Go(func() {
			r := newBlobReader(s, dir, opts, workers, fan)
			defer r.close()
			for {
				select {
				case <-tokens:
				case <-quit:
					return
				}
				if !readChunk(r) {
					return
				}
			}
		})
	}
	mine := newBlobReader(s, dir, opts, workers, fan)
	defer mine.close()
	stop := func() {
		close(quit)
		wg.Wait()
	}
	claimed := false // every chunk is claimed: nothing left to read here
	for c := range nchunks {
	wait:
		for {
			if err := ctx.Err(); err != nil {
				stop()
				return err
			}
			select {
			case <-ready[c%ring]:
				break wait
			default:
			}
			if !claimed {
				select {
				case <-tokens:
					if !readChunk(mine) {
						claimed = true
						tokens <- struct{}{}
					}
					continue
				default:
				}
			}
			select {
			case <-ready[c%ring]:
				break wait
			case <-ctx.Done():
				stop()
				return ctx.Err()
			}
		}
		place := slots[c%ring*chunk:][:chunk]
		for k, i := 0, c*chunk; k < chunk && i < len(ids); k, i = k+1, i+1 {
			if err := ctx.Err(); err != nil {
				stop()
				return err
			}
			sl := place[k]
			place[k] = slot{buf: sl.buf}
			if err := fn(i, sl.data, sl.err); err != nil {
				stop()
				return err
			}
		}
		tokens <- struct{}{}
	}
	stop()
	return nil
}

// reusable is the buffer to read the next blob into after data was read
// with buf: with ReuseBuffers, data's memory when the worker's reader made
// it (mine: buf's memory or a buffer of its own, never the repo's, whose
// Blob may hand out a slice of its write buffer) and it is larger than buf
// but not too large to keep, else buf; nil without ReuseBuffers.
func reusable(opts BlobsOptions, buf, data []byte, mine bool) []byte {
	switch {
	case !opts.ReuseBuffers:
		return nil
	case mine && cap(data) > cap(buf) && cap(data) <= reuseMax:
		return data[:0]
	}
	return buf
}

// blobChecked is Blob, then CheckLoose's check when asked for.
func (s *repo) blobChecked(id OID, checkLoose bool) ([]byte, error) {
	data, err := s.Blob(id)
	if err == nil && checkLoose {
		err = CheckLooseObject(s.path, id)
	}
	if err != nil {
		return nil, err
	}
	return data, nil
}

// blobReader is one ReadBlobs worker's object reader: an odb of its own
// over the repo's object directory, read without the repo's mutex.
type blobReader struct {
	s    *repo
	d    *odb
	opts BlobsOptions
	// fan, with CheckLoose, says which fan-out directories objects/xx
	// existed when the read began (looseFanout); nil: look for every one.
	fan *[256]bool
}

func newBlobReader(s *repo, dir string, opts BlobsOptions, workers int, fan *[256]bool) *blobReader {
	d := newODB(dir)
	d.private = true
	// The workers' delta base caches share the one repo's budget.
	d.cache.limit = max(baseCacheBytes/workers, baseCacheMax)
	return &blobReader{s: s, d: d, opts: opts, fan: fan}
}

// looseFanout lists the objects directory once for a ReadBlobs with
// CheckLoose: an object whose fan-out directory objects/xx is not there
// (a store packed by maintenance or gc keeps few of them) has no loose
// copy, so it is not looked for with an lstat of its own. Any entry named
// xx counts, whatever it is. A loose copy written into a new fan-out
// directory after the listing is not checked by this read (it is by the
// next). nil when the directory cannot be listed.
func looseFanout(objects string) *[256]bool {
	entries, err := readDir(objects)
	if err != nil {
		return nil
	}
	var fan [256]bool
	for _, e := range entries {
		if n := e.Name(); len(n) == 2 {
			if b, err := hex.DecodeString(n); err == nil { // any case: "AB" is "ab" where names fold
				fan[b[0]] = true
			}
		}
	}
	return &fan
}

func (r *blobReader) close() { r.d.Close() }

// read returns blob id's bytes as Blob does. The worker's own reader
// answers what it finds in this repository's packs and loose objects;
// everything else (a miss, a pack gone, an alternate, a wrong type or
// content, a bad object) is read again through the repo, which gives
// Blob's answer and error (a concurrent gc included). The bytes may be
// in buf's memory (buf[:n]) when its capacity holds them; mine says they
// are buf's or a buffer the reader made for them, not the repo's answer.
func (r *blobReader) read(id OID, buf []byte) (data []byte, mine bool, err error) {
	h, err := parseOID(id)
	if err != nil {
		data, err = r.s.blobChecked(id, r.opts.CheckLoose)
		return data, false, err
	}
	if buf == nil && r.opts.ReuseBuffers {
		buf = []byte{} // not nil: a loose object's content then starts its buffer (decodeLooseInto)
	}
	t, data, streamErr, err := r.readOwn(h, buf)
	// With ContentChecked the id is checked only where the stream is bad
	// too: a changed object is Blob's error before it is the stream's.
	if err != nil || t != plumbing.BlobObject || (!r.opts.ContentChecked || streamErr != nil) && objectHash(t, data) != h {
		data, err = r.s.blobChecked(id, r.opts.CheckLoose)
		return data, false, err
	}
	if streamErr != nil {
		return nil, false, streamErr
	}
	return data, true, nil
}

// errLooseToo: a packed blob also has a loose file, which CheckLoose checks.
var errLooseToo = errors.New("packed object also stored loose")

// readOwn reads h from the worker's packs, then from the loose objects;
// never from an alternate.
func (r *blobReader) readOwn(h plumbing.Hash, buf []byte) (plumbing.ObjectType, []byte, error, error) {
	d := r.d
	p, off, ok, err := d.findPacked(h)
	if err != nil {
		return 0, nil, nil, err
	}
	if ok {
		t, data, err := d.readPackedInto(p, off, 0, buf)
		if err == nil && r.opts.CheckLoose {
			// CheckLooseObject checks a loose copy of a packed object too:
			// when there may be one, the repo answers (blobChecked).
			if r.fan != nil && !r.fan[h[0]] {
				return t, data, nil, err
			}
			if _, serr := os.Lstat(filepath.Join(d.dir, h.String()[:2], h.String()[2:])); !errors.Is(serr, fs.ErrNotExist) {
				return 0, nil, nil, errLooseToo
			}
		}
		return t, data, nil, err
	}
	return d.readLooseStreamInto(filepath.Join(d.dir, h.String()[:2], h.String()[2:]), r.opts.CheckLoose, buf)
}
