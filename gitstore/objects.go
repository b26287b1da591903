package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/readproof/readproof/gitstore/gitobj"

	"github.com/go-git/go-git/v5/plumbing"
	githash "github.com/go-git/go-git/v5/plumbing/hash"
)

// ---- object ids ----

// isHexOID is gitobj.IsObjectID.
func isHexOID(s string) bool { return gitobj.IsObjectID(s) }

const zeroOID = "0000000000000000000000000000000000000000"

// parseOID checks that id is 40 lower-case hex digits and not the null id.
func parseOID(id OID) (plumbing.Hash, error) {
	if err := checkOID(id); err != nil {
		return plumbing.ZeroHash, err
	}
	return plumbing.NewHash(string(id)), nil
}

// checkOID is parseOID's check without the decoding (which allocates).
func checkOID(id OID) error {
	if !isHexOID(string(id)) || id == zeroOID {
		return fmt.Errorf("object id %q is not 40 lower-case hex digits: pass an id returned by the store", string(id))
	}
	return nil
}

func looseRel(h plumbing.Hash) string {
	hex := h.String()
	return "objects/" + hex[:2] + "/" + hex[2:]
}

// ---- writing objects ----

// PutBlob stores data as a blob.
func (s *repo) PutBlob(data []byte) (OID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.BlobObject, data)
}

// PutTree stores a tree after sorting and checking its entries.
func (s *repo) PutTree(entries []TreeEntry) (OID, error) {
	data, err := encodeTree(entries)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.TreeObject, data)
}

// PutCommit stores a commit, with its signature in the gpgsig header.
func (s *repo) PutCommit(c Commit) (OID, error) {
	data, err := encodeCommit(c)
	if err != nil {
		return "", err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.putObject(plumbing.CommitObject, data)
}

// putObject writes data as an object of type t unless it is already stored
// (loose or packed). Called with s.mu held.
func (s *repo) putObject(t plumbing.ObjectType, data []byte) (OID, error) {
	if s.closed {
		return "", errClosed
	}
	h := s.computeHash(t, data)
	if s.storedAlready(h) {
		return OID(h.String()), nil
	}
	if err := s.buffer(h, t, data); err != nil {
		return "", fmt.Errorf("write %s object: %w", t, err)
	}
	return OID(h.String()), nil
}

// computeHash is plumbing.ComputeHash with one hasher per store, reset for
// each object instead of made anew (a run of 10,000 documents hashes 50,000
// objects). Called with s.mu held.
func (s *repo) computeHash(t plumbing.ObjectType, data []byte) plumbing.Hash {
	if s.hasher == nil {
		s.hasher = githash.New(githash.CryptoType)
	}
	s.hasher.Reset()
	var head [32]byte
	s.hasher.Write(appendObjectHeader(head[:0], t, len(data)))
	s.hasher.Write(data)
	var h plumbing.Hash
	s.hasher.Sum(h[:0])
	return h
}

// appendObjectHeader appends the header git hashes before an object's
// content: its type, a space, its size in decimal and a NUL.
func appendObjectHeader(b []byte, t plumbing.ObjectType, n int) []byte {
	b = append(append(b, t.Bytes()...), ' ')
	return append(strconv.AppendInt(b, int64(n), 10), 0)
}

// storedAlready reports whether the object h is stored already: buffered,
// loose or packed (and freshened so a concurrent gc keeps it). Called with
// s.mu held.
func (s *repo) storedAlready(h plumbing.Hash) bool {
	if s.isBuffered(h) {
		return true
	}
	// The path is built only when objects/xx may hold it: a batch into a
	// fresh store skips two strings an object.
	if s.mayBeLoose(h) {
		rel := looseRel(h)
		if freshenLoose(filepath.Join(s.path, filepath.FromSlash(rel))) {
			// Another process may have written it without syncing yet: make it
			// part of our next Sync. Re-stamped so a concurrent gc keeps it (gc.go).
			// freshenLoose fails on a missing file, so it is also the lookup:
			// no stat before it.
			s.pending = append(s.pending, rel)
			return true
		}
	}
	// A stale pack index would only cost a duplicate loose object here, so
	// the pack list is re-read at most every packCheckEvery.
	listed := s.refreshPacks()
	return s.packedHas(h) && s.freshenPacked(h, listed)
}

const (
	fanoutAbsent  = 1
	fanoutPresent = 2
)

// mayBeLoose reports whether h may exist as a loose object: false when its
// fan-out directory objects/xx was missing when first looked for since the
// last flush, so a batch into a store with few loose objects costs one
// lstat a directory instead of one an object. A loose copy written by
// another process since then is missed, which costs only a second copy in
// our own write (as a stale pack list does). Called with s.mu held.
func (s *repo) mayBeLoose(h plumbing.Hash) bool {
	switch s.fanout[h[0]] {
	case fanoutAbsent:
		return false
	case fanoutPresent:
		return true
	}
	if s.fanLooks++; s.fanLooks > fanoutLstats {
		// A batch meeting many fan-out directories: one listing of
		// objects/ answers for all of them (an entry named xx is there
		// exactly when the lstat of objects/xx finds something).
		if fan := looseFanout(filepath.Join(s.path, "objects")); fan != nil {
			for i, there := range fan {
				if s.fanout[i] == 0 {
					s.fanout[i] = fanoutAbsent
					if there {
						s.fanout[i] = fanoutPresent
					}
				}
			}
			return s.fanout[h[0]] == fanoutPresent
		}
	}
	dir := filepath.Join(s.path, "objects", hex.EncodeToString(h[:1]))
	if _, err := os.Lstat(dir); err != nil && errors.Is(err, fs.ErrNotExist) {
		s.fanout[h[0]] = fanoutAbsent
		return false
	}
	s.fanout[h[0]] = fanoutPresent
	return true
}

// fanoutLstats is how many fan-out directories mayBeLoose looks for one by
// one after a flush before it lists objects/ instead.
const fanoutLstats = 8

// writeLooseOnce writes one loose object (writeLoose, in gc.go, retries
// it): zlib-compressed into objects/pack/tmp_obj_* (where git and go-git put
// theirs, so the stale sweep finds a killed writer's), then linked into
// place. On any failure the temporary file is removed; a full disk gives an
// error for which errors.Is(err, syscall.ENOSPC) holds, with a hint. Called
// with s.mu held.
func (s *repo) writeLooseOnce(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	rel := looseRel(h)
	full := filepath.Join(s.path, filepath.FromSlash(rel))
	tmp, err := s.createTemp(filepath.Join(s.path, "objects", "pack"), "tmp_obj_")
	if err != nil {
		return diskError(fmt.Errorf("write %s object %s: %w", t, h, err))
	}
	name := tmp.Name()
	err = writeZlib(tmpWriter(tmp), t, data)
	if err == nil {
		err = tmp.Chmod(s.perm.object())
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		// Link, not rename: an object another process wrote meanwhile is
		// kept as it is (same id, same content).
		err = s.linkLoose(name, full, h[0])
	}
	os.Remove(name)
	if err != nil {
		return diskError(fmt.Errorf("write %s object %s: %w", t, h, err))
	}
	s.pending = append(s.pending, rel)
	return nil
}

// linkLoose links the written temporary file name to the loose object
// path full, of an object whose id starts with the byte fan. The fan-out
// directory is created only when the link finds it missing: most objects
// go into a directory that exists, where looking for it first (and again
// in os.MkdirAll) cost three to five stat calls an object. An object
// another process linked first counts as written. The objects linked into
// a directory this store created are counted for estimateLoose. Called
// with s.mu held.
func (s *repo) linkLoose(name, full string, fan byte) error {
	err := os.Link(name, full)
	if errors.Is(err, fs.ErrNotExist) {
		made, merr := s.perm.mkdir(filepath.Dir(full))
		if merr != nil {
			return merr
		}
		if made {
			if s.madeDirs == nil {
				s.madeDirs = map[byte]int{}
			}
			s.madeDirs[fan] = 0
		}
		err = os.Link(name, full)
	}
	if errors.Is(err, fs.ErrExist) {
		err = nil
	}
	if n, ok := s.madeDirs[fan]; ok && err == nil {
		s.madeDirs[fan] = n + 1
	}
	return err
}

// looseWriter is a zlib compressor and its output buffer, reused between
// loose objects: building a new compressor allocates about 1 MiB, which
// was a fifth of the CPU time of a store write.
type looseWriter struct {
	bw *bufio.Writer
	zw *zlib.Writer
}

var looseWriters = sync.Pool{New: func() any {
	bw := bufio.NewWriterSize(nil, 64<<10)
	zw, err := zlib.NewWriterLevel(bw, zlib.BestSpeed)
	if err != nil {
		panic(err) // BestSpeed is a valid level
	}
	return &looseWriter{bw: bw, zw: zw}
}}

// writeZlib writes a loose object's content: zlib("<type> <size>\x00" data).
func writeZlib(w io.Writer, t plumbing.ObjectType, data []byte) error {
	head := t.String() + " " + strconv.Itoa(len(data)) + "\x00"
	if len(data) < storeBelow {
		// A small object (a commit, a tree, a record) takes a file
		// system block of its own however well it compresses: it is
		// stored in zlib stored blocks, as a pack's small entries are,
		// without the compressor (650 KB) that a process writing only
		// small objects, as a one-document run or get does, would
		// otherwise allocate and fault in for its first object.
		var z bytes.Buffer
		z.Grow(len(head) + len(data) + 16)
		appendStoredZlib(&z, []byte(head), data)
		_, err := w.Write(z.Bytes())
		return err
	}
	lw := looseWriters.Get().(*looseWriter)
	defer func() {
		// drop the reference to w before the writer goes back to the pool
		lw.bw.Reset(nil)
		lw.zw.Reset(lw.bw)
		looseWriters.Put(lw)
	}()
	lw.bw.Reset(w)
	lw.zw.Reset(lw.bw)
	if _, err := lw.zw.Write([]byte(head)); err != nil {
		return err
	}
	if _, err := lw.zw.Write(data); err != nil {
		return err
	}
	if err := lw.zw.Close(); err != nil {
		return err
	}
	return lw.bw.Flush()
}

// ---- reading objects ----

// readObject returns an object whose content matches its id. Called with
// s.mu held.
func (s *repo) readObject(id OID) (plumbing.EncodedObject, []byte, error) {
	return s.readObjectAtMost(id, -1)
}

// readObjectAtMost is readObject for an object of at most max bytes (max
// < 0: any size), refused as readObjectUncheckedAtMost refuses one.
// Called with s.mu held.
func (s *repo) readObjectAtMost(id OID, max int64) (plumbing.EncodedObject, []byte, error) {
	o, data, h, err := s.readObjectUncheckedAtMost(id, max)
	if err != nil || h == nil {
		return o, data, err
	}
	if err := checkContent(id, o.Type(), data, *h); err != nil {
		return nil, nil, err
	}
	return o, data, nil
}

// checkContent returns readObject's error when data, of type t, does not
// hash to h, the hash of id.
func checkContent(id OID, t plumbing.ObjectType, data []byte, h plumbing.Hash) error {
	if objectHash(t, data) != h {
		return errContentMismatch(id)
	}
	return nil
}

// readObjectUnchecked is readObject without the check of the content
// against the id, which the caller makes when h is not nil (an object
// still in the write buffer has nothing to check). Called with s.mu held.
func (s *repo) readObjectUnchecked(id OID) (plumbing.EncodedObject, []byte, *plumbing.Hash, error) {
	return s.readObjectUncheckedAtMost(id, -1)
}

// readObjectUncheckedAtMost is readObjectUnchecked for an object of at
// most max bytes (max < 0: any size): a larger one is refused with an
// error wrapping ErrTooLarge in the one read, before its content is
// inflated (odb.readAtMost). Called with s.mu held.
func (s *repo) readObjectUncheckedAtMost(id OID, max int64) (plumbing.EncodedObject, []byte, *plumbing.Hash, error) {
	if s.closed {
		return nil, nil, nil, errClosed
	}
	h, err := parseOID(id)
	if err != nil {
		return nil, nil, nil, err
	}
	if o, data, ok := s.buffered(h); ok {
		if max >= 0 && int64(len(data)) > max {
			return nil, nil, nil, tooLarge(id, int64(len(data)), max)
		}
		return o, data, nil, nil
	}
	if s.copied != nil {
		if err := s.copied.failed(); err != nil {
			// what is read beside a failed copy is not used
			return nil, nil, nil, fmt.Errorf("read object %s: the copy of this repository failed: %w", id, err)
		}
		if k, ok := s.copied.get(h); ok {
			if max >= 0 && int64(len(k.data)) > max {
				return nil, nil, nil, tooLarge(id, int64(len(k.data)), max)
			}
			// hashed to h by the copy's index: nothing to check; the
			// caller owns what it reads, as an inflated object, so it
			// gets a copy (one: a MemoryObject would copy it again)
			data := bytes.Clone(k.data)
			return &rawObject{h: h, t: k.t, data: data}, data, nil, nil
		}
	}
	var o plumbing.EncodedObject
	var data []byte
	read := func() error {
		t, d, err := s.st.readAtMost(h, max)
		if err != nil {
			return err
		}
		o, data = &rawObject{h: h, t: t, data: d}, d
		return nil
	}
	if err := read(); err != nil {
		// git gc may have packed the object, or replaced the pack we knew
		// (the index may still name a pack that was just removed). One
		// found too large was found.
		if !errors.Is(err, ErrTooLarge) {
			err = s.afterMiss(read)
		}
		switch {
		case err == nil:
		case errors.Is(err, ErrTooLarge):
			return nil, nil, nil, fmt.Errorf("object %s: %w", id, err)
		case errors.Is(err, plumbing.ErrObjectNotFound):
			return nil, nil, nil, s.missingObject(id)
		case errors.Is(err, fs.ErrPermission):
			return nil, nil, nil, fmt.Errorf("read object %s: %w", id, err)
		default:
			return nil, nil, nil, objectReadError(id, err)
		}
	}
	return o, data, &h, nil
}

// verifyAsideFrom is the size from which BlobVerifying hashes a blob on a
// goroutine of its own.
const verifyAsideFrom = 256 << 10

// BlobVerifying is Blob for a caller that decodes a large blob while its
// content is checked against its id: it returns the bytes at once, with
// check, which waits for that check (on a goroutine of its own from
// verifyAsideFrom bytes) and returns Blob's error when the content does
// not match. The caller must call check and act on nothing it made of the
// bytes (print, return, store) unless it returns nil. Every other error is
// Blob's, returned at once.
func (s *repo) BlobVerifying(id OID) ([]byte, func() error, error) {
	s.mu.Lock()
	o, data, h, err := s.readObjectUnchecked(id)
	s.mu.Unlock()
	if err != nil {
		return nil, nil, err
	}
	ok := func() error { return nil }
	if h != nil {
		want, t := *h, o.Type()
		if len(data) < verifyAsideFrom {
			if err := checkContent(id, t, data, want); err != nil {
				return nil, nil, err
			}
		} else {
			done := make(chan error, 1)
			go func() { done <- checkContent(id, t, data, want) }()
			ok = sync.OnceValue(func() error { return <-done })
		}
	}
	if o.Type() != plumbing.BlobObject {
		// Blob checks the content first: so does this.
		if err := ok(); err != nil {
			return nil, nil, err
		}
		return nil, nil, fmt.Errorf("blob %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	return data, ok, nil
}

// RawObject returns an object's type and content.
func (s *repo) RawObject(id OID) (string, []byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return "", nil, err
	}
	return o.Type().String(), data, nil
}

// Blob returns a blob's bytes.
func (s *repo) Blob(id OID) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return nil, err
	}
	if o.Type() != plumbing.BlobObject {
		return nil, fmt.Errorf("blob %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	return data, nil
}

// Tree returns a tree's entries in git order.
func (s *repo) Tree(id OID) ([]TreeEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return nil, err
	}
	if o.Type() != plumbing.TreeObject {
		return nil, fmt.Errorf("tree %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	return decodeTree(id, data)
}

// decodeTree decodes the content of a tree object (id names it in errors).
func decodeTree(id OID, data []byte) ([]TreeEntry, error) {
	es, err := parseTreeEntries(data)
	if err != nil {
		return nil, fmt.Errorf("tree %s: %w: %w", id, ErrCorrupt, err)
	}
	out := make([]TreeEntry, len(es))
	for i, e := range es {
		out[i] = TreeEntry{Name: e.name, Mode: Mode(e.mode), OID: OID(e.hash.String())}
	}
	return out, nil
}

// Commit returns a decoded commit, signature included.
func (s *repo) Commit(id OID) (Commit, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, data, err := s.readObject(id)
	if err != nil {
		return Commit{}, err
	}
	if o.Type() != plumbing.CommitObject {
		return Commit{}, fmt.Errorf("commit %s: object is a %s: %w", id, o.Type(), ErrNotFound)
	}
	return decodeCommit(id, data)
}

// decodeCommit decodes the content of a commit object, signature included
// (id names it in errors).
func decodeCommit(id OID, data []byte) (Commit, error) {
	gc, err := parseCommit(data)
	if err != nil {
		return Commit{}, fmt.Errorf("commit %s: %w: %w", id, ErrCorrupt, err)
	}
	c := Commit{
		Tree:      OID(gc.tree.String()),
		Author:    gc.author,
		Committer: gc.committer,
		Message:   gc.message,
		Signature: gc.signature,
	}
	for _, p := range gc.parents {
		c.Parents = append(c.Parents, OID(p.String()))
	}
	return c, nil
}

// Has reports whether an object exists, loose or packed.
func (s *repo) Has(id OID) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.has(id)
}

// has is Has with s.mu held.
func (s *repo) has(id OID) (bool, error) {
	if s.closed {
		return false, errClosed
	}
	h, err := parseOID(id)
	if err != nil {
		return false, err
	}
	if s.isBuffered(h) {
		return true, nil
	}
	// The pack indexes first when they are mapped already: a lookup there
	// costs no system call, and an Update of a batch checks objects that
	// were just packed.
	if s.st.scanned {
		if _, _, ok, err := s.st.findPacked(h); ok && err == nil {
			return true, nil
		}
	}
	if _, err := os.Lstat(filepath.Join(s.path, filepath.FromSlash(looseRel(h)))); err == nil {
		return true, nil
	}
	err = s.st.HasEncodedObject(h)
	if err != nil {
		err = s.afterMiss(func() error { return s.st.HasEncodedObject(h) })
	}
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return false, nil
	default:
		return false, fmt.Errorf("look up object %s: %w", id, err)
	}
}

// Sync makes every object written through this Store durable.
func (s *repo) Sync() error {
	s.syncMu.Lock() // see takePending
	defer s.syncMu.Unlock()
	if err := s.lockFlushed(); err != nil {
		return err
	}
	pending := s.pending
	s.pending, s.smallPacks = nil, s.smallPacks[:0]
	s.mu.Unlock()
	return s.syncPending(pending)
}

// lockFlushed takes s.mu and writes out the objects still buffered. It
// returns holding s.mu, or an error with s.mu released.
func (s *repo) lockFlushed() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errClosed
	}
	if err := s.flush(); err != nil {
		s.mu.Unlock()
		return fmt.Errorf("write objects in %s: %w", s.path, err)
	}
	return nil
}

// syncPending makes pending (taken from s.pending) durable, and puts them
// back on a failure, for the next Sync to try again.
func (s *repo) syncPending(pending []string) error {
	if len(pending) == 0 {
		return nil
	}
	if err := s.syncObjects(pending); err != nil {
		s.restorePending(pending)
		return fmt.Errorf("sync objects in %s: %w", s.path, err)
	}
	return nil
}

// objectHash is the git object id of data, computed with the standard
// library's SHA-1 (hardware accelerated). It checks what was read against
// the id it was asked for; go-git's collision-detecting SHA-1 still names
// every object written.
func objectHash(t plumbing.ObjectType, data []byte) plumbing.Hash {
	h := sha1.New()
	var head [32]byte
	h.Write(appendObjectHeader(head[:0], t, len(data)))
	h.Write(data)
	var out plumbing.Hash
	copy(out[:], h.Sum(nil))
	return out
}

// rawObject is a read object handed to the decoders (decodeTree, the
// commit decoder) without copying its content.
type rawObject struct {
	h    plumbing.Hash
	t    plumbing.ObjectType
	data []byte
}

func (o *rawObject) Hash() plumbing.Hash           { return o.h }
func (o *rawObject) Type() plumbing.ObjectType     { return o.t }
func (o *rawObject) SetType(t plumbing.ObjectType) { o.t = t }
func (o *rawObject) Size() int64                   { return int64(len(o.data)) }
func (o *rawObject) SetSize(int64)                 {}
func (o *rawObject) Reader() (io.ReadCloser, error) {
	return io.NopCloser(bytes.NewReader(o.data)), nil
}
func (o *rawObject) Writer() (io.WriteCloser, error) { return nil, errors.New("read-only object") }
