package gitstore

// A pack indexed and checked in Go, in one pass over its entries, for the
// copy of a local source (CopyLocalObjects): each object inflated once,
// its id, CRC32 and offset computed, the object checked as `git
// index-pack --strict` checks it, and the version 2 index written as git
// writes it for the same pack.
//
// indexPackGo never refuses a pack: it accepts one only when every object
// is in a narrow canonical subset it recognises (docs/sync.md, "Clone":
// which, and why the subset is safe), and reports anything else (an
// object it does not recognise, a pack it cannot parse, a missing object)
// as a reason to hand the same pack file to `git index-pack --strict`,
// which then decides exactly as it did before this existed. So what git
// refuses, the copy still refuses, with git's message.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"hash/adler32"
	"hash/crc32"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-git/go-git/v5/plumbing"
	githash "github.com/go-git/go-git/v5/plumbing/hash"

	"github.com/readproof/readproof/gitstore/gitobj"
)

// collisionSummer is sha1cd's digest (githash.New): git hashes with
// sha1dc and refuses an object that is part of a collision attack.
type collisionSummer interface {
	CollisionResistantSum([]byte) ([]byte, bool)
}

const (
	// indexHeldMax bounds the bytes of deltas and their bases held at once;
	// past it, git indexes the pack.
	indexHeldMax = 64 << 20
	// maxTreeName bounds a tree entry's name in the subset.
	maxTreeName = 255
	// keptBlobMax and keptMax bound what CopiedObjects holds: blobs of at
	// most keptBlobMax bytes (a manifest), keptMax bytes in all.
	keptBlobMax = 64 << 10
	keptMax     = 32 << 20
	// maxDeltaRounds bounds the passes of resolveDeltas over the pack,
	// each of which resolves every delta whose base is known by then: a
	// pack git writes needs one (a base is written before its deltas), a
	// chain of REF_DELTAs written backwards one per delta.
	maxDeltaRounds = 4
	// deltaSizeMin is git's DELTA_SIZE_MIN: patch_delta refuses a shorter
	// delta ("failed to apply delta"), which applyDelta would apply (two
	// bytes: an empty object).
	deltaSizeMin = 4
)

// keptObject is an object indexPackKeeping hashed.
type keptObject struct {
	t    plumbing.ObjectType
	data []byte
}

// idFan is the fan-out of a sorted list of ids: the ids starting with
// byte b are at [fan[b], fan[b+1]). Filled by count for each id, then sum.
type idFan [257]int32

func (f *idFan) count(h plumbing.Hash) { f[int(h[0])+1]++ }

func (f *idFan) sum() {
	for i := 1; i < len(f); i++ {
		f[i] += f[i-1]
	}
}

// span is where the ids starting as h does are.
func (f *idFan) span(h plumbing.Hash) (lo, hi int) { return int(f[h[0]]), int(f[int(h[0])+1]) }

// compareTail orders two ids of one span: by what follows their first byte.
func compareTail(a, b plumbing.Hash) int { return bytes.Compare(a[1:], b[1:]) }

// keptObjects are the objects indexPackKeeping hashed, in the order of
// their ids, and their contents.
type keptObjects struct {
	fan      idFan
	ids      []plumbing.Hash
	types    []plumbing.ObjectType
	contents [][]byte // each in one of the indexer's arena chunks (or a delta's own result)
	bytes    int      // in contents
	reserved int      // in the arena chunks allocated
}

// CopiedObjects hands the objects the Go index of a copy hashed (its
// commits, trees and blobs of at most 64 KiB, 32 MiB in all) to a reader
// of the same objects (OpenLocalSourceWith), which takes them instead of
// reading and inflating them again: each was hashed to its id, as every
// read checks it, so what it serves is what a read of that id returns.
// It is empty until the copy's index is done (Indexed; it stays empty
// when git indexed the copy); it may be read while it is filled.
//
// Once the copy has failed or was stopped, every read through it answers
// with the copy's error (failed): whoever reads the source beside a copy
// discards what it read when the copy fails, so it stops at its next read.
type CopiedObjects struct {
	m    atomic.Pointer[keptObjects]
	err  atomic.Pointer[error] // the copy's failure (fail)
	once sync.Once
	done chan struct{}
}

// NewCopiedObjects returns an empty CopiedObjects for one copy.
func NewCopiedObjects() *CopiedObjects {
	return &CopiedObjects{done: make(chan struct{})}
}

// Indexed is closed once the copy's Go index is done, whether it kept
// anything or left the copy to git, or the copy ended without one.
func (c *CopiedObjects) Indexed() <-chan struct{} {
	if c == nil {
		done := make(chan struct{})
		close(done)
		return done
	}
	return c.done
}

// fail records that the copy failed with err (nil: it did not).
func (c *CopiedObjects) fail(err error) {
	if c != nil && err != nil {
		c.err.Store(&err)
	}
}

// failed is the copy's failure, if it failed.
func (c *CopiedObjects) failed() error {
	if c != nil {
		if p := c.err.Load(); p != nil {
			return *p
		}
	}
	return nil
}

// finish closes Indexed (c may be nil).
func (c *CopiedObjects) finish() {
	if c != nil {
		c.once.Do(func() { close(c.done) })
	}
}

// get returns the object named h, if the copy kept it (its content is
// shared: the caller copies it).
func (c *CopiedObjects) get(h plumbing.Hash) (keptObject, bool) {
	if c == nil {
		return keptObject{}, false
	}
	k := c.m.Load()
	if k == nil {
		return keptObject{}, false
	}
	lo, hi := k.fan.span(h)
	i, ok := slices.BinarySearchFunc(k.ids[lo:hi], h, compareTail)
	if !ok {
		return keptObject{}, false
	}
	i += lo
	return keptObject{k.types[i], k.contents[i]}, true
}

// Len is the number of objects held (for tests).
func (c *CopiedObjects) Len() int {
	if k := c.m.Load(); k != nil {
		return len(k.ids)
	}
	return 0
}

// indexedObject is one entry of the pack being indexed.
type indexedObject struct {
	h       plumbing.Hash
	off     int64 // of its entry header
	data    int64 // of its zlib stream
	crc     uint32
	t       plumbing.ObjectType // the object's type (a delta's: its base's)
	delta   plumbing.ObjectType // OFS or REF delta; 0 for a whole object
	baseOff int64
	baseID  plumbing.Hash
	size    int64 // the inflated size of the entry (a delta's: of the delta)
	done    bool  // id known
	// kept: its content, when kept for CopiedObjects (nil: not kept);
	// its capacity is its length
	kept []byte
}

// packLink is an object an object of the pack names, and the type it
// must have.
type packLink struct {
	h plumbing.Hash
	t plumbing.ObjectType
}

// packIndexer holds the state of one indexPackGo.
type packIndexer struct {
	ctx   context.Context
	work  int64 // bytes inflated since ctx was last looked at
	pack  []byte
	objs  []indexedObject
	links []packLink
	fi    inflater
	hash  githash.Hash
	names [][]byte // the names of the tree being checked, so far
	held  int
	// sorted: the objects in the order of their ids
	sorted []sortedObject
	buf    []byte   // the content of the whole object being checked
	hdr    [32]byte // the object header being hashed, then its sum
	// kept, when not nil, takes the commits, trees and small blobs hashed
	// (keptBlobMax, keptMax), for CopiedObjects
	keep bool
	// arena is the chunk whole objects kept are inflated into; a full
	// chunk is left where it is (its objects point into it) and a larger
	// one started, so nothing kept is ever copied
	arena     []byte
	keptBytes int // kept so far, at most keptMax
	reserved  int // the capacity of the chunks allocated
	// deltaVisits counts the entries resolveDeltas looked at, over all
	// its passes: the work its test holds to the pack's size
	deltaVisits int
}

// indexPackGo indexes and checks pack, a whole pack file. It returns the
// version 2 index git writes for it, or why it leaves the pack to git
// (idx nil). It stops (why "canceled") once ctx is done, looked at about
// once per MiB of entries and once per delta, as the copy's git
// index-pack is killed.
func indexPackGo(ctx context.Context, pack []byte) (idx []byte, why string) {
	idx, _, why = indexPackKeeping(ctx, pack, false)
	return idx, why
}

// indexPackKeeping is indexPackGo that, with keep, also returns the
// commits, trees and small blobs it hashed (CopiedObjects).
func indexPackKeeping(ctx context.Context, pack []byte, keep bool) (idx []byte, kept *keptObjects, why string) {
	x := &packIndexer{ctx: ctx, pack: pack, hash: githash.New(githash.CryptoType), keep: keep}
	if why := x.run(); why != "" {
		return nil, nil, why
	}
	if keep {
		kept = x.keptObjects()
	}
	return x.index(), kept, ""
}

// keptObjects gathers what object kept, in the order of the ids.
func (x *packIndexer) keptObjects() *keptObjects {
	k := &keptObjects{bytes: x.keptBytes, reserved: x.reserved}
	for _, so := range x.sorted {
		o := &x.objs[so.i]
		if o.kept == nil {
			continue
		}
		k.fan.count(o.h)
		k.ids = append(k.ids, o.h)
		k.types = append(k.types, o.t)
		k.contents = append(k.contents, o.kept)
	}
	k.fan.sum()
	return k
}

// index is the version 2 index of the pack run indexed.
func (x *packIndexer) index() []byte {
	pack := x.pack
	return encodeSortedIndex(len(x.sorted), func(i int) indexEntry {
		o := &x.objs[x.sorted[i].i]
		return indexEntry{h: o.h, off: uint64(o.off), crc: o.crc}
	}, pack[len(pack)-20:])
}

func (x *packIndexer) run() string {
	p := x.pack
	if len(p) < 12+20 || !bytes.Equal(p[:4], []byte("PACK")) || binary.BigEndian.Uint32(p[4:]) != 2 {
		return "not a version 2 pack"
	}
	x.hash.Reset()
	x.hash.Write(p[:len(p)-20])
	if sum, col := x.hash.(collisionSummer).CollisionResistantSum(nil); col || !bytes.Equal(sum, p[len(p)-20:]) {
		return "pack checksum"
	}
	n := int(binary.BigEndian.Uint32(p[8:]))
	end := int64(len(p) - 20)
	if int64(n) > end/2 {
		return "object count"
	}
	// n is the header's claim (up to half the pack's bytes): room for it
	// up to a bound, then as many objects as the entries found need, and
	// links for what a small pack names, then what its entries name
	x.objs = make([]indexedObject, 0, min(n, 1<<12))
	x.links = make([]packLink, 0, 2*min(n, 1<<12))
	off := int64(12)
	deltas := 0
	for range n {
		if off >= end {
			return "truncated pack"
		}
		e, back, hl, why := entryHeader(p[off:min(off+64, end)])
		if why != "" {
			return why
		}
		if e.size > maxFastInflate {
			return "large object"
		}
		if x.canceled(e.size) {
			return "canceled"
		}
		o := indexedObject{off: off, data: off + int64(hl), size: e.size, t: e.t}
		switch e.t {
		case plumbing.OFSDeltaObject:
			if back <= 0 || back > off-12 {
				return "delta base outside the pack"
			}
			o.delta, o.t, o.baseOff = e.t, 0, off-back
		case plumbing.REFDeltaObject:
			o.delta, o.t, o.baseID = e.t, 0, e.baseID
		}
		var dst []byte
		kept := x.keeps(e.t, e.size)
		if kept {
			dst = x.reserve(int(e.size))
		} else {
			if int64(cap(x.buf)) < e.size {
				x.buf = make([]byte, max(e.size, 64<<10))
			}
			dst = x.buf[:e.size]
		}
		data, used, ok := x.inflateInto(dst, o.data, end)
		if !ok {
			return "zlib stream"
		}
		entryEnd := o.data + int64(used)
		o.crc = crc32.ChecksumIEEE(p[off:entryEnd])
		if o.delta == 0 {
			if why := x.object(&o, data, kept); why != "" {
				return why
			}
		} else {
			deltas++
		}
		x.objs = append(x.objs, o)
		off = entryEnd
	}
	if off != end {
		return "data after the last object"
	}
	if deltas > 0 {
		if why := x.resolveDeltas(deltas); why != "" {
			return why
		}
	}
	x.sorted = make([]sortedObject, len(x.objs))
	for i := range x.objs {
		x.sorted[i] = sortedObject{x.objs[i].h, int32(i)}
	}
	slices.SortFunc(x.sorted, func(a, b sortedObject) int { return bytes.Compare(a.h[:], b.h[:]) })
	for i := 1; i < len(x.sorted); i++ {
		if x.sorted[i].h == x.sorted[i-1].h {
			return "object twice in the pack"
		}
	}
	// the links looked up in the range of their first byte
	var fan idFan
	for _, o := range x.sorted {
		fan.count(o.h)
	}
	fan.sum()
	for _, l := range x.links {
		lo, hi := fan.span(l.h)
		i, ok := slices.BinarySearchFunc(x.sorted[lo:hi], l.h, func(o sortedObject, h plumbing.Hash) int { return compareTail(o.h, h) })
		i += lo
		if !ok {
			return "missing object " + l.h.String()
		}
		if x.objs[x.sorted[i].i].t != l.t {
			return "object of another type"
		}
	}
	return ""
}

// sortedObject is an object's id and its place in packIndexer.objs.
type sortedObject struct {
	h plumbing.Hash
	i int32
}

// canceled reports whether ctx is done, looking at it once per MiB or so
// of entries about to be inflated.
func (x *packIndexer) canceled(size int64) bool {
	x.work += 64 + size
	if x.work < 1<<20 {
		return false
	}
	x.work = 0
	return x.ctx.Err() != nil
}

// inflate decodes the zlib stream at off, which must decode to exactly
// size bytes and end with its Adler-32 checksum; used counts the bytes of
// the stream, checksum included.
func (x *packIndexer) inflate(off, end, size int64) (data []byte, used int, ok bool) {
	return x.inflateInto(make([]byte, size), off, end)
}

// inflateInto is inflate into data, of the size the stream must decode to.
func (x *packIndexer) inflateInto(data []byte, off, end int64) ([]byte, int, bool) {
	src := x.pack[off:end]
	if !zlibHeaderOK(src) {
		return nil, 0, false
	}
	_, n, err := x.fi.inflate(data, src[2:], false)
	if err != nil {
		return nil, 0, false
	}
	rest := src[2+n:]
	if len(rest) < 4 || binary.BigEndian.Uint32(rest) != adler32.Checksum(data) {
		return nil, 0, false
	}
	return data, 2 + n + 4, true
}

// keeps reports whether an object of type t and size bytes is kept for
// CopiedObjects: commits, trees and blobs of at most keptBlobMax bytes, up
// to keptMax bytes in all.
func (x *packIndexer) keeps(t plumbing.ObjectType, size int64) bool {
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject:
	case plumbing.BlobObject:
		if size > keptBlobMax {
			return false
		}
	default:
		return false
	}
	return x.keep && size <= int64(keptMax-x.keptBytes)
}

// reserve returns the next size bytes of the arena, for an object keeps
// said yes to. A chunk too small for it is left as it is, and the next one
// is twice as large (the first twice the pack's bytes: small objects
// inflate to about that), never past what keptMax leaves. A commit or a
// tree larger than a kept blob can be has bytes of its own: a chunk is
// left only for an object of at most keptBlobMax, so what the chunks
// leave unused stays under keptBlobMax each (a run of ever larger trees
// left most of each chunk unused, the chunks up to 1.3 keptMax).
func (x *packIndexer) reserve(size int) []byte {
	if size > keptBlobMax {
		x.reserved += size
		return make([]byte, size)
	}
	if n := len(x.arena); size > cap(x.arena)-n {
		c := max(2*cap(x.arena), 2*len(x.pack))
		c = max(size, min(c, keptMax-x.keptBytes))
		x.arena = make([]byte, 0, c)
		x.reserved += c
	}
	n := len(x.arena)
	x.arena = x.arena[:n+size]
	return x.arena[n : n+size : n+size]
}

// object hashes and checks the content of o, a whole object; kept: data
// is to be kept for CopiedObjects (keeps said so, and it is not
// overwritten: a chunk of the arena, or a delta's own result).
func (x *packIndexer) object(o *indexedObject, data []byte, kept bool) string {
	x.hash.Reset()
	x.hash.Write(appendObjectHeader(x.hdr[:0], o.t, len(data)))
	x.hash.Write(data)
	// summed into x.hdr, which no longer holds the header (so nothing
	// is allocated per object)
	sum, col := x.hash.(collisionSummer).CollisionResistantSum(x.hdr[:0])
	if col {
		return "SHA-1 collision"
	}
	copy(o.h[:], sum)
	o.done = true
	if kept {
		o.kept = data[:len(data):len(data)]
		x.keptBytes += len(data)
	}
	switch o.t {
	case plumbing.BlobObject:
		return ""
	case plumbing.CommitObject:
		return x.commit(data)
	case plumbing.TreeObject:
		return x.tree(data)
	default:
		return "tag"
	}
}

// resolveDeltas resolves the deltas of the pack, in rounds: a delta whose
// base is known (a whole object, or a delta resolved before) is applied,
// until none is left or a round resolves none.
func (x *packIndexer) resolveDeltas(left int) string {
	byOff := func(off int64) int {
		i, ok := slices.BinarySearchFunc(x.objs, off, func(o indexedObject, off int64) int { return int(min(max(o.off-off, -1), 1)) })
		if !ok {
			return -1
		}
		return i
	}
	var ids map[plumbing.Hash]int // only for REF_DELTAs: by id
	for i := range x.objs {
		if x.objs[i].delta == plumbing.REFDeltaObject {
			ids = map[plumbing.Hash]int{}
			break
		}
	}
	if ids != nil {
		for i := range x.objs {
			if x.objs[i].done {
				ids[x.objs[i].h] = i
			}
		}
	}
	content := map[int][]byte{} // deltas resolved, and bases inflated
	get := func(i int) ([]byte, bool) {
		if c, ok := content[i]; ok {
			return c, true
		}
		o := &x.objs[i]
		if o.kept != nil {
			return o.kept, true // inflated already, into the arena
		}
		data, _, ok := x.inflate(o.data, int64(len(x.pack)-20), o.size)
		if !ok {
			return nil, false
		}
		x.held += len(data)
		content[i] = data
		return data, true
	}
	for round := 0; left > 0; round++ {
		if round == maxDeltaRounds {
			return "delta bases after their deltas"
		}
		progress := false
		x.deltaVisits += len(x.objs)
		for i := range x.objs {
			o := &x.objs[i]
			if o.done {
				continue
			}
			base := -1
			if o.delta == plumbing.OFSDeltaObject {
				base = byOff(o.baseOff)
				if base < 0 {
					return "delta base not an entry"
				}
			} else if b, ok := ids[o.baseID]; ok {
				base = b
			}
			if base < 0 || !x.objs[base].done {
				continue
			}
			if x.canceled(x.objs[i].size) {
				return "canceled"
			}
			bdata, ok := get(base)
			if !ok {
				return "zlib stream"
			}
			delta, _, ok := x.inflate(o.data, int64(len(x.pack)-20), o.size)
			if !ok {
				return "zlib stream"
			}
			if len(delta) < deltaSizeMin {
				return "delta too short"
			}
			dst, ok := deltaSizesShort(delta)
			if !ok {
				return "delta size header"
			}
			if dst > maxFastInflate {
				return "large object" // left to git before it is built
			}
			data, err := applyDelta(bdata, delta)
			if err != nil || int64(len(data)) > maxFastInflate {
				return "delta"
			}
			o.t = x.objs[base].t
			if why := x.object(o, data, x.keeps(o.t, int64(len(data)))); why != "" {
				return why
			}
			x.held += len(data)
			if x.held > indexHeldMax {
				return "deltas too large to hold"
			}
			content[i] = data
			if ids != nil {
				ids[o.h] = i
			}
			left--
			progress = true
		}
		if !progress {
			return "delta base not in the pack"
		}
	}
	return ""
}

// deltaSizesShort reports whether the two sizes a delta starts with (its
// base's, its result's) are each written in at most four bytes, as git
// writes sizes that fit 28 bits, and returns the second, its result's. A
// longer one is left to git: deltaSize drops bits past 64 that git's
// get_delta_hdr_size dies on ("size_t overflow"), and neither size of an
// object indexed here needs more.
func deltaSizesShort(delta []byte) (result int64, ok bool) {
	var v uint64
	for range 2 {
		n := 0
		for n < len(delta) && n < 4 && delta[n]&0x80 != 0 {
			n++
		}
		if n == len(delta) || n == 4 {
			return 0, false
		}
		v, _, _ = deltaSize(delta[:n+1])
		delta = delta[n+1:]
	}
	return int64(v), true
}

// hexID parses 40 lowercase hex digits followed by '\n' at the start of b,
// not the null id.
func hexID(b []byte) (plumbing.Hash, bool) {
	var h plumbing.Hash
	if len(b) < 41 || b[40] != '\n' || !gitobj.IsObjectID(b[:40]) {
		return h, false
	}
	hex.Decode(h[:], b[:40]) // cannot fail: checked above
	return h, !h.IsZero()
}

// commit checks a commit in the subset: "tree", any "parent", one
// "author" and one "committer" line, each as below, at most a "gpgsig"
// header, then a blank line and any message, no NUL anywhere.
func (x *packIndexer) commit(b []byte) string {
	if bytes.IndexByte(b, 0) >= 0 {
		return "commit with a NUL"
	}
	rest, ok := bytes.CutPrefix(b, []byte("tree "))
	if !ok {
		return "commit header"
	}
	h, ok := hexID(rest)
	if !ok {
		return "commit tree"
	}
	x.links = append(x.links, packLink{h, plumbing.TreeObject})
	rest = rest[41:]
	for {
		after, ok := bytes.CutPrefix(rest, []byte("parent "))
		if !ok {
			break
		}
		h, ok := hexID(after)
		if !ok {
			return "commit parent"
		}
		x.links = append(x.links, packLink{h, plumbing.CommitObject})
		rest = after[41:]
	}
	for _, field := range []string{"author ", "committer "} {
		after, ok := bytes.CutPrefix(rest, []byte(field))
		if !ok {
			return "commit header"
		}
		nl := bytes.IndexByte(after, '\n')
		if nl < 0 || !identOK(after[:nl]) {
			return "commit ident"
		}
		rest = after[nl+1:]
	}
	// A signature (readproof signs manifests: docs/evidence.md): one
	// "gpgsig" header, its continuation lines each starting with a space.
	// git's fsck reads nothing after the committer line but that the
	// headers end with a blank line and hold no NUL (verify_headers).
	if after, ok := bytes.CutPrefix(rest, []byte("gpgsig ")); ok {
		for {
			nl := bytes.IndexByte(after, '\n')
			if nl < 0 {
				return "commit header"
			}
			rest = after[nl+1:]
			if len(rest) == 0 || rest[0] != ' ' {
				break
			}
			after = rest
		}
	}
	if len(rest) == 0 || rest[0] != '\n' {
		return "commit header" // another header, or no blank line
	}
	return ""
}

// identOK reports whether an ident line (without its "author " and its
// newline) is in the subset: "Name <email> seconds +hhmm", printable
// ASCII; a name that does not start with a space, no '<' or '>' in name
// or email, no space in a non-empty email, a date of 1-10 digits without
// a leading zero, a time zone of a sign and four digits.
func identOK(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	lt := bytes.IndexByte(b, '<')
	if lt < 2 || b[lt-1] != ' ' || b[0] == ' ' || bytes.IndexByte(b[:lt], '>') >= 0 {
		return false
	}
	gt := bytes.IndexByte(b[lt+1:], '>')
	if gt < 1 {
		return false
	}
	email := b[lt+1 : lt+1+gt]
	if bytes.IndexByte(email, '<') >= 0 || bytes.IndexByte(email, ' ') >= 0 {
		return false
	}
	rest, ok := bytes.CutPrefix(b[lt+1+gt+1:], []byte(" "))
	if !ok {
		return false
	}
	sp := bytes.IndexByte(rest, ' ')
	if sp < 1 || sp > 10 || (rest[0] == '0' && sp > 1) {
		return false
	}
	for _, c := range rest[:sp] {
		if c < '0' || c > '9' {
			return false
		}
	}
	tz := rest[sp+1:]
	if len(tz) != 5 || (tz[0] != '+' && tz[0] != '-') {
		return false
	}
	for _, c := range tz[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// tree checks a tree in the subset: entries of mode 100644, 100755 or
// 40000, names as treeNameOK takes them, not the null id, in git's order
// with no name twice.
func (x *packIndexer) tree(b []byte) string {
	x.names = x.names[:0]
	var prev []byte
	prevDir := false
	for len(b) > 0 {
		sp := bytes.IndexByte(b, ' ')
		if sp < 0 {
			return "tree entry"
		}
		var t plumbing.ObjectType
		switch string(b[:sp]) {
		case "100644", "100755":
			t = plumbing.BlobObject
		case "40000":
			t = plumbing.TreeObject
		default:
			return "tree entry mode"
		}
		b = b[sp+1:]
		nul := bytes.IndexByte(b, 0)
		if nul < 0 || len(b) < nul+1+20 {
			return "tree entry"
		}
		name := b[:nul]
		if !treeNameOK(name) {
			return "tree entry name"
		}
		var h plumbing.Hash
		copy(h[:], b[nul+1:nul+21])
		if h.IsZero() {
			return "tree entry null id"
		}
		dir := t == plumbing.TreeObject
		if prev != nil && treeNameCompare(prev, prevDir, name, dir) >= 0 {
			return "tree order"
		}
		if dir {
			// A file of the same name sorts before the tree, with only
			// names that extend it by a byte below '/' between them.
			for j := len(x.names) - 1; j >= 0; j-- {
				p := x.names[j]
				if !bytes.HasPrefix(p, name) || (len(p) > len(name) && p[len(name)] >= '/') {
					break
				}
				if len(p) == len(name) {
					return "tree entry twice"
				}
			}
		}
		x.names = append(x.names, name)
		prev, prevDir = name, dir
		x.links = append(x.links, packLink{h, t})
		b = b[nul+21:]
	}
	return ""
}

// treeNameCompare compares two tree entry names as git orders them: a
// tree's name as if followed by '/'.
func treeNameCompare(a []byte, aDir bool, b []byte, bDir bool) int {
	n := min(len(a), len(b))
	if c := bytes.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	next := func(s []byte, dir bool) int {
		if len(s) > n {
			return int(s[n])
		}
		if dir {
			return '/'
		}
		return 0
	}
	return next(a, aDir) - next(b, bDir)
}

// treeNameOK reports whether a tree entry's name is in the subset: 1-255
// bytes of ASCII letters, digits and "-_.+=,@~", not "." or "..", not
// starting with ".git" or ".mailmap" in any case, and with a '~' only
// when it does not start with g, m or '~' (the names git's fsck looks at:
// .git, .gitmodules, .gitattributes, .gitignore, .mailmap, with their NTFS
// spellings, below, and HFS spellings, which need bytes outside ASCII).
func treeNameOK(name []byte) bool {
	if len(name) == 0 || len(name) > maxTreeName {
		return false
	}
	for _, c := range name {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-', c == '_', c == '.', c == '+', c == '=', c == ',', c == '@', c == '~':
		default:
			return false
		}
	}
	if string(name) == "." || string(name) == ".." {
		return false
	}
	// A '~' (URI clashes give readproof names such as "refunds~1") makes
	// an NTFS short name only after a prefix of git's short names for the
	// names its fsck checks: "git~1", "gitmod~1", "gi7eba~1" (.gitmodules),
	// "gi250a" (.gitignore), "gi7d29" (.gitattributes), "maba30" (.mailmap),
	// or an empty prefix ("~1234567": path.c, is_ntfs_dotgit and
	// is_ntfs_dot_generic). A name starting with g, m or '~' is left to git.
	if bytes.IndexByte(name, '~') >= 0 {
		switch name[0] {
		case 'g', 'G', 'm', 'M', '~':
			return false
		}
	}
	return !hasPrefixFold(name, ".git") && !hasPrefixFold(name, ".mailmap")
}

// hasPrefixFold reports whether name starts with prefix, ASCII letters in
// either case.
func hasPrefixFold(name []byte, prefix string) bool {
	return len(name) >= len(prefix) && bytes.EqualFold(name[:len(prefix)], []byte(prefix))
}
