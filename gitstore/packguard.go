package gitstore

import (
	"bufio"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/go-git/go-git/v5/plumbing"
)

// ErrObjectTooLarge: a fetched pack holds an object larger than the
// mirror's bound. go-git inflates every object of a pack whole in memory
// while it indexes the pack, so one object of N bytes costs N bytes of
// memory; a pack of a few megabytes can hold an object of gigabytes (zeros
// compress a thousandfold, and a delta of a few bytes can repeat its base).
var ErrObjectTooLarge = errors.New("the repository holds an object over the size limit")

// DefaultMirrorMaxObject bounds a mirror's objects when MirrorOptions sets
// no MaxObjectBytes: 100 MiB, GitHub's own limit on a file, so that any
// repository GitHub holds fetches.
const DefaultMirrorMaxObject = 100 << 20

// ErrRepoTooLarge: a fetched pack is larger, or holds more objects, than
// the mirror's bounds (MirrorOptions.MaxPackBytes, MaxPackObjects). The
// pack is spooled to disk whole before go-git indexes it, and go-git keeps
// about 470 bytes of memory per object while it does: a remote that sends
// a pack of millions of tiny objects, or gigabytes of noise, costs that
// much memory or disk before the fetch's timeout stops it.
var ErrRepoTooLarge = errors.New("the repository is over the size limit")

// Pack bounds derived from the object bound when MirrorOptions sets none:
// a pack may be packBytesPerObjectBound times the object bound (1,000 MiB
// under the default object bound, GitHub's advice for a repository's
// size), and hold one object per packBytesPerObject bytes of that bound
// (512,000 under the default: about 240 MB of go-git's index while the
// pack is indexed; git.git has about 400,000 objects).
const (
	packBytesPerObjectBound = 10
	packBytesPerObject      = 2 << 10
)

// ErrDeltaChainTooLarge: a fetched pack holds a delta whose chain (the
// delta, its base, the base's base and so on to a whole object) makes more
// bytes than the mirror's chain bound (MirrorOptions.MaxChainBytes).
// go-git rebuilds a delta's chain whole each time it makes the delta, and
// holds the object of every level at once while it does: a chain of 8
// deltas of 97 MiB objects costs it GBs of memory (measured in
// TestMirrorRefusesLongDeltaChain's comment), refused here from each
// entry's header before it is inflated.
var ErrDeltaChainTooLarge = errors.New("the repository holds a delta chain over the size limit")

// DefaultMirrorMaxChain is the floor of a mirror's chain bound when
// MirrorOptions sets no MaxChainBytes: the bound is the larger of it and
// twice the object bound (one delta and its whole base).
const DefaultMirrorMaxChain = 512 << 20

// packBounds are the limits receivePack applies to one pack: the largest
// object, the pack's bytes and its number of objects.
type packBounds struct {
	object, bytes, objects int64
}

// mirrorPackBounds returns the bounds of a fetch under opts, the defaults
// applied.
func mirrorPackBounds(opts MirrorOptions) packBounds {
	b := packBounds{object: opts.MaxObjectBytes, bytes: opts.MaxPackBytes, objects: opts.MaxPackObjects}
	if b.object <= 0 {
		b.object = DefaultMirrorMaxObject
	}
	if b.bytes <= 0 {
		b.bytes = math.MaxInt64
		if b.object <= math.MaxInt64/packBytesPerObjectBound {
			b.bytes = b.object * packBytesPerObjectBound
		}
	}
	if b.objects <= 0 {
		b.objects = max(b.bytes/packBytesPerObject, 1)
	}
	return b
}

// mirrorChainBound is the chain bound of a fetch under opts whose pack
// bounds are b: MaxChainBytes, else the larger of DefaultMirrorMaxChain
// and twice the object bound.
func mirrorChainBound(opts MirrorOptions, b packBounds) int64 {
	if opts.MaxChainBytes > 0 {
		return opts.MaxChainBytes
	}
	if b.object > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return max(DefaultMirrorMaxChain, 2*b.object)
}

// maxPackTrailer bounds what receivePack keeps of a stream after the
// pack's checksum: git sends nothing there, go-git judges what a server
// does send, and an endless stream is refused instead of spooled to disk
// until the fetch times out.
const maxPackTrailer = 64 << 10

// receivePack reads the pack stream r into a temporary file in dir while
// a scanner checks every object's size (for a delta, the size of the object
// it makes) against max, inflating each into nothing. It returns the file,
// at its start, for go-git to index, or ErrObjectTooLarge before go-git has
// seen a byte of the pack: go-git indexes a pack while it arrives and
// inflates each object whole, so the check cannot run beside it. The
// caller closes and removes the file.
func receivePack(dir string, r io.Reader, max int64) (_ *os.File, err error) {
	return receivePackBounded(dir, r, packBounds{object: max, bytes: math.MaxInt64, objects: math.MaxInt64}, 0)
}

// receivePackBounded is receivePack under all of b: besides each object's
// size, the pack's number of objects, refused from its header before an
// entry is read, and its bytes, refused as soon as one more than b.bytes
// has arrived (ErrRepoTooLarge); and a delta whose chain makes more than
// chain bytes (ErrDeltaChainTooLarge; 0: no bound).
func receivePackBounded(dir string, r io.Reader, b packBounds, chain int64) (_ *os.File, err error) {
	f, err := os.CreateTemp(dir, receivedPrefix)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriterSize(f, 64<<10)
	cr := &packCounter{r: r, left: b.bytes}
	r = cr
	if err := scanPackChained(io.TeeReader(r, bw), b, chain); err != nil {
		if cr.over {
			// what the scanner made of the cut stream is beside the point
			return nil, fmt.Errorf("%w: the pack is over the %d-byte limit", ErrRepoTooLarge, b.bytes)
		}
		return nil, err
	}
	// What follows the pack's checksum is go-git's to judge, up to
	// maxPackTrailer bytes.
	if n, err := io.CopyN(bw, r, maxPackTrailer+1); cr.over {
		return nil, fmt.Errorf("%w: the pack is over the %d-byte limit", ErrRepoTooLarge, b.bytes)
	} else if err != nil && err != io.EOF {
		return nil, err
	} else if n > maxPackTrailer {
		return nil, fmt.Errorf("%w: the remote sent more than %d bytes after the pack", errPackCorrupt, maxPackTrailer)
	}
	if err := bw.Flush(); err != nil {
		return nil, err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	return f, nil
}

// receivedPrefix names the file receivePack spools a pack to.
const receivedPrefix = "tmp_pack_received_"

// receivedIdxPrefix names the file storeReceived writes a received
// pack's index to, in objects/pack, before it renames it into place.
const receivedIdxPrefix = "tmp_idx_received_"

// removeReceived removes what a fetch killed while it received a pack left
// in dir: a spooled pack, as large as the pack was, or the index of one
// being written (storeReceived). The caller holds the mirror's lock for
// writing, so no other fetch is receiving one.
func removeReceived(dir string) {
	left, _ := filepath.Glob(filepath.Join(dir, receivedPrefix+"*"))
	idx, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", receivedIdxPrefix+"*"))
	for _, f := range append(left, idx...) {
		os.Remove(f)
	}
}

// scanPackSizes reads a pack stream ("PACK", version, count, entries, a
// checksum) and fails with ErrObjectTooLarge at the first object over max.
// It checks the format only as far as it must to find the entries; go-git
// checks the rest (names, checksum, delta bases).
func scanPackSizes(r io.Reader, max int64) error {
	return scanPack(r, packBounds{object: max, bytes: math.MaxInt64, objects: math.MaxInt64})
}

// madePerPackByte bounds what a pack makes (the sum of its objects'
// sizes, a delta counted by the size of the object it makes and of its
// base) by the bytes of pack read so far, beyond the larger of the pack
// and object bounds, which a pack may always make: zeros deflate a
// thousandfold, and a delta of a few bytes makes an object as large as
// its base, so a pack of megabytes could otherwise make terabytes. go-git
// makes every object whole to index the pack, which costs its size in
// CPU (about 5 s a GB), after the fetch's timeout has stopped counting,
// and reads a delta's base whole each time it applies a delta (a 100 MiB
// base, over its cache, is inflated again: 0.47 s a delta of 4 bytes).
// A delta's base is about as large as what it makes, so counting bases
// about doubles what a history makes, and the ratio is twice the 256
// that objects alone were held to. A repository's history makes 25 to 50
// times its pack, 50 to 90 counting bases (this one 25 and 49, git.git
// 28 and 56, openssh-portable 46 and 92, counted on the packs a clone
// receives), at most 112 along the pack once past 1,000 MiB; a history
// of small changes to a large file makes more (120 versions of an 8.7 MB
// CSV file that deflates fivefold, one line changed in each: 410; 60 of
// a 12 MB file that deflates fortyfold: 4,862, refused once past the
// 1,000 MiB a pack may always make).
const madePerPackByte = 512

// countingReader counts what is read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// madeBound is what a pack may make once read bytes of it have arrived
// under b: the larger of b.bytes and b.object, or madePerPackByte times
// read.
func madeBound(b packBounds, read int64) uint64 {
	floor := uint64(max(b.bytes, b.object))
	if read > math.MaxInt64/madePerPackByte {
		return math.MaxInt64
	}
	return max(floor, uint64(read*madePerPackByte))
}

// scanPack is scanPackSizes that also refuses, from the pack's header, a
// pack of more than b.objects objects (ErrRepoTooLarge), and, from each
// entry's header before it is inflated, a pack whose objects (a delta
// with its base) come to more than madeBound (ErrRepoTooLarge).
func scanPack(r io.Reader, b packBounds) error {
	return scanPackChained(r, b, 0)
}

// scanPackChained is scanPack that also refuses, from each delta's header
// before it is inflated, a delta whose chain (what it makes, its base's,
// and so on to a whole object) makes more than chain bytes
// (ErrDeltaChainTooLarge; 0: no bound).
func scanPackChained(r io.Reader, b packBounds, chain int64) error {
	max, bounds := b.object, b
	cr := &countingReader{r: r}
	br := bufio.NewReaderSize(cr, 64<<10)
	var made uint64
	// the bytes scanned so far: those read less those br holds ahead
	scanned := func() int64 { return cr.n - int64(br.Buffered()) }
	var hdr [12]byte
	if _, err := io.ReadFull(br, hdr[:]); err != nil {
		return fmt.Errorf("pack header: %w", unexpectedEOF(err))
	}
	if string(hdr[:4]) != "PACK" {
		return fmt.Errorf("%w: no pack signature", errPackCorrupt)
	}
	if v := binary.BigEndian.Uint32(hdr[4:8]); v != 2 && v != 3 {
		return fmt.Errorf("%w: pack version %d", errPackCorrupt, v)
	}
	count := binary.BigEndian.Uint32(hdr[8:12])
	if int64(count) > b.objects {
		return fmt.Errorf("%w: the pack holds %d objects, over the limit of %d", ErrRepoTooLarge, count, b.objects)
	}
	var zr io.ReadCloser
	var head [20]byte
	chains := newChainBook(chain)
	for i := uint32(0); i < count; i++ {
		start := scanned()
		// A header is at most 30 bytes (the packed reader's entryHeader
		// decodes it); at the stream's end Peek gives what is left, and
		// entryHeader says it is cut short.
		b, _ := br.Peek(64)
		e, back, hn, why := entryHeader(b)
		if why != "" {
			return fmt.Errorf("%w: pack entry %d: %s", errPackCorrupt, i, why)
		}
		br.Discard(hn)
		size, delta := uint64(e.size), e.t == plumbing.OFSDeltaObject || e.t == plumbing.REFDeltaObject
		if size > uint64(max) {
			return packObjectTooLarge(i, size, max, delta)
		}
		var err error
		if !delta {
			if made, err = addMade(made, size, bounds, scanned(), i); err != nil {
				return err
			}
			chains.add(start, size, size)
		}
		if zr == nil {
			zr, err = zlib.NewReader(br)
		} else {
			err = zr.(zlib.Resetter).Reset(br, nil)
		}
		if err != nil {
			return fmt.Errorf("%w: pack entry %d: %v", errPackCorrupt, i, err)
		}
		// At most size bytes are inflated (plus one, to see a stream that
		// says less than it holds); the rest of the stream is not read.
		lr := io.LimitReader(zr, int64(size)+1)
		n := 0
		if delta {
			// A delta starts with its base's size and its result's.
			n, _ = io.ReadFull(lr, head[:min(len(head), int(size))])
			base, rest, ok := deltaSize(head[:n])
			var target uint64
			if ok {
				target, _, ok = deltaSize(rest)
			}
			if !ok {
				return fmt.Errorf("%w: pack entry %d: delta header", errPackCorrupt, i)
			}
			if target > uint64(max) {
				return packObjectTooLarge(i, target, max, true)
			}
			// go-git reads the base whole for each delta it applies, so
			// the base counts with what the delta makes (a base said to
			// be larger than the object bound is a lie go-git finds once
			// it has read the real one: it counts at the bound)
			if made, err = addMade(made, min(base, uint64(max))+target, bounds, scanned(), i); err != nil {
				return err
			}
			// go-git holds every level of the delta's chain at once
			var held uint64
			if e.t == plumbing.OFSDeltaObject {
				held = chains.at(start - back)
			} else {
				held = chains.ofSize(min(base, uint64(max)), uint64(max))
			}
			if chain > 0 && held+target > uint64(chain) {
				return fmt.Errorf("%w: pack entry %d is a delta whose chain (the object of %d bytes it makes, its base, and the base's own bases) makes %d bytes, over the %d-byte limit", ErrDeltaChainTooLarge, i, target, held+target, chain)
			}
			chains.add(start, target, held+target)
		}
		got, err := io.Copy(io.Discard, lr)
		if err != nil {
			return fmt.Errorf("%w: pack entry %d: %v", errPackCorrupt, i, err)
		}
		if uint64(got)+uint64(n) > size {
			return fmt.Errorf("%w: pack entry %d holds more than its %d bytes", errPackCorrupt, i, size)
		}
	}
	if _, err := br.Discard(20); err != nil { // the pack's checksum
		return fmt.Errorf("pack checksum: %w", unexpectedEOF(err))
	}
	return nil
}

// chainTracked is the least chain a chainBook remembers an entry by: an
// entry it does not find made less, and is counted at this.
const chainTracked = 64 << 10

// chainBook remembers, for the entries of a pack scanned so far, what the
// chain of each makes: a whole object its size, a delta what it makes
// and what its base's chain makes. go-git rebuilds the chain whole each
// time it makes a delta, holding the object of each level at once. Only
// entries whose chain makes at least chainTracked are kept (a pack of
// small objects costs nothing), by offset (entries come in the order of
// their offsets) and by the size of the object they make.
type chainBook struct {
	off    []int64
	chain  []uint64
	bySize map[uint64]uint64 // the largest chain of an object of that size
	keep   bool              // a zero bound keeps nothing
}

func newChainBook(bound int64) *chainBook {
	return &chainBook{bySize: map[uint64]uint64{}, keep: bound > 0}
}

// add records the entry at off, which makes size bytes with a chain
// making chain.
func (c *chainBook) add(off int64, size, chain uint64) {
	if !c.keep || chain < chainTracked {
		return
	}
	c.off = append(c.off, off)
	c.chain = append(c.chain, chain)
	if chain > c.bySize[size] {
		c.bySize[size] = chain
	}
}

// at is what the chain of the entry at off makes (an OFS_DELTA's base).
func (c *chainBook) at(off int64) uint64 {
	if i, ok := slices.BinarySearch(c.off, off); ok {
		return c.chain[i]
	}
	return chainTracked
}

// ofSize is what the chain of a REF_DELTA's base of size bytes makes:
// the base is named by its id, which the scan does not compute, so it is
// taken as the longest chain of an earlier entry that makes that size.
// Git writes a base before its deltas. A base no earlier entry makes
// (with a chain of at least chainTracked) comes later in the pack (git
// never writes that; a base outside it go-git does not look up), and
// go-git resolves one there only when it is a delta of a whole object,
// one of at most object bytes: the base's chain is counted as its size
// and object.
func (c *chainBook) ofSize(size, object uint64) uint64 {
	if chain, ok := c.bySize[size]; ok {
		return max(size, chain)
	}
	return size + object
}

// addMade adds size, what entry i makes (a delta with its base), to
// made, the sum of the entries before it, or refuses the pack when the
// sum passes madeBound after read bytes.
func addMade(made, size uint64, b packBounds, read int64, i uint32) (uint64, error) {
	bound := madeBound(b, read)
	if size > bound || made > bound-size {
		return made, fmt.Errorf("%w: its objects come to more than %d bytes (a delta counted with its base) by pack entry %d, made from %d bytes of pack (a pack may make %d times its bytes, or %d bytes)", ErrRepoTooLarge, bound, i, read, madePerPackByte, uint64(max(b.bytes, b.object)))
	}
	return made + size, nil
}

// packCounter reads r until left bytes are gone; one more byte is an
// error, and over says so.
type packCounter struct {
	r    io.Reader
	left int64
	over bool
}

func (c *packCounter) Read(p []byte) (int, error) {
	if c.over {
		return 0, ErrRepoTooLarge
	}
	if int64(len(p)) > c.left {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.over = true
		return int(c.left), ErrRepoTooLarge
	}
	c.left -= int64(n)
	return n, err
}

func packObjectTooLarge(i uint32, size uint64, max int64, delta bool) error {
	what := "an object"
	if delta {
		what = "a delta that makes an object"
	}
	return fmt.Errorf("%w: pack entry %d is %s of %d bytes, over the %d-byte limit", ErrObjectTooLarge, i, what, size, max)
}

func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
