package gitstore

// Pack indexes and packs, read in place (see odb.go). Formats: git's
// Documentation/gitformat-pack.txt. An index (version 2) is
//
//	"\377tOc" 00 00 00 02 | fan-out: 256 x uint32 | N sorted 20-byte names |
//	N x CRC32 | N x uint32 offset (MSB set: index into the next table) |
//	M x uint64 offset | pack checksum | index checksum
//
// (version 1: fan-out, then N x (uint32 offset, name), then the checksums).
// A pack is "PACK", version, count, then entries: a type-and-size header,
// for OFS_DELTA the distance back to the base and for REF_DELTA its name,
// then the zlib-compressed content or delta.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

var (
	// errPackCorrupt marks a pack or index that does not follow the format.
	errPackCorrupt = errors.New("corrupt pack")
	// errPackGone is a pack removed (by gc) after its index was listed.
	errPackGone = errors.New("pack removed")
)

type packFile struct {
	dir, name string // objects/pack, "pack-<checksum>"
	mtime     time.Time

	idx     []byte // the mapped .idx
	release func()
	version int
	count   int

	pack     io.ReaderAt // the .pack, opened on first read
	mapped   []byte      // the .pack mapped, where the platform maps
	unmap    func()
	packFile *os.File
	packSize int64
	packErr  error
	// openFile, when set, opens the .pack instead of openRead of its
	// path (a source repository read in place: openSourceFile)
	openFile func() (*os.File, error)

	// headerReads counts the entry headers read (entryAt): tests check
	// that a read reads each once
	headerReads atomic.Int64

	// read counts the bytes of the pack and its index read since their
	// mappings were last trimmed (as estimated by touch); past
	// trimAfter, trimIdx and trimPack give their pages back, so that a
	// long read of a store (a session's chain of 100,000 receipts) keeps
	// about trimAfter bytes of them resident, not the whole files
	read      atomic.Int64
	trimAfter int64
	trimIdx   func()
	trimPack  func()
	// trims counts the trims done: tests check that a pack and index
	// no larger than trimAfter are never trimmed
	trims atomic.Int64
}

// packTrimAfter is how many bytes of a pack and its index one process
// reads (touch) between two trims of their mappings: a few times what
// one command's read of a run or a receipt maps, and small beside the
// 100+ MB of a long chain's pack. A pack and its index no larger than it
// together are never trimmed: fewer of their bytes than that can ever be
// resident, so a trim would only cost the faults that map them again (a
// replay of 1,000 documents read a pack of 5 MB and trimmed it).
const packTrimAfter = 32 << 20

// lookupBytes is what one lookup in an index is counted as read, and
// entryBytes what one entry of a pack is beside its content: a read of a
// page not mapped yet maps the pages around it too (Linux's fault-around,
// 64 KB), so a walk reading small objects here and there maps far more
// than it reads (counting an entry as its content and 16 KB, a session's
// walk at 100,000 receipts had 55 MB of the pack mapped after 32 MB
// counted; as its content and 64 KB, 45 MB of the pack and its index).
const (
	lookupBytes = 16 << 10
	entryBytes  = 64 << 10
)

// touch counts n more bytes read from the pack or its index, and trims
// both mappings when trimAfter is passed, unless the two files together
// are no larger than trimAfter. Only the goroutine whose count passes it
// trims; a trim while another reads is harmless (the mappings are
// read-only and private: a page given back is read again from the page
// cache).
func (p *packFile) touch(n int64) {
	if p.trimAfter <= 0 {
		return
	}
	v := p.read.Add(n)
	if v < p.trimAfter || !p.read.CompareAndSwap(v, 0) {
		return
	}
	if int64(len(p.idx))+p.packSize <= p.trimAfter {
		return
	}
	p.trims.Add(1)
	if p.trimIdx != nil {
		p.trimIdx()
	}
	if p.trimPack != nil {
		p.trimPack()
	}
}

const (
	idxHeader = 8
	fanout    = 256 * 4
)

// openPackIndex maps dir/name.idx and checks its shape (not its checksum:
// what is read from the pack is checked against the id asked for).
func openPackIndex(dir, name string) (*packFile, error) {
	f, err := openRead(filepath.Join(dir, name+".idx"))
	if err != nil {
		return nil, err
	}
	return mapPackIndex(f, dir, name)
}

// mapPackIndex is openPackIndex of the opened .idx f, which it closes.
func mapPackIndex(f *os.File, dir, name string) (*packFile, error) {
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	data, release, trim, err := mapFileTrimmable(f, fi.Size())
	if err != nil {
		return nil, err
	}
	p := &packFile{dir: dir, name: name, mtime: fi.ModTime(), idx: data, release: release, trimAfter: packTrimAfter, trimIdx: trim}
	if err := p.checkIndex(); err != nil {
		release()
		return nil, fmt.Errorf("%s.idx: %w", name, err)
	}
	return p, nil
}

func (p *packFile) checkIndex() error {
	d := p.idx
	fan := d
	if len(d) >= idxHeader && bytes.Equal(d[:4], []byte{0xff, 't', 'O', 'c'}) {
		if v := binary.BigEndian.Uint32(d[4:]); v != 2 {
			return fmt.Errorf("%w: index version %d", errPackCorrupt, v)
		}
		p.version = 2
		fan = d[idxHeader:]
	} else {
		p.version = 1
	}
	if len(fan) < fanout {
		return fmt.Errorf("%w: index too short", errPackCorrupt)
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(fan[i*4:])
		if v < prev {
			return fmt.Errorf("%w: index fan-out not ascending", errPackCorrupt)
		}
		prev = v
	}
	n := int64(prev)
	p.count = int(prev)
	switch p.version {
	case 1:
		if int64(len(d)) != fanout+n*24+40 {
			return fmt.Errorf("%w: index size %d does not fit %d objects", errPackCorrupt, len(d), n)
		}
	case 2:
		min := idxHeader + fanout + n*28 + 40
		if int64(len(d)) < min || (int64(len(d))-min)%8 != 0 {
			return fmt.Errorf("%w: index size %d does not fit %d objects", errPackCorrupt, len(d), n)
		}
	}
	return nil
}

func (p *packFile) close() {
	if p.release != nil {
		p.release()
		p.release, p.idx = nil, nil
	}
	if p.unmap != nil {
		p.unmap()
		p.unmap, p.mapped = nil, nil
	}
	if p.packFile != nil {
		p.packFile.Close()
		p.pack, p.packFile = nil, nil
	}
}

// find binary-searches the index for h and returns its entry's offset.
func (p *packFile) find(h plumbing.Hash) (int64, bool, error) {
	if p.idx == nil {
		return 0, false, nil
	}
	p.touch(lookupBytes)
	fan := p.idx[idxHeader:]
	if p.version == 1 {
		fan = p.idx
	}
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(fan[(int(h[0])-1)*4:]))
	}
	hi := int(binary.BigEndian.Uint32(fan[int(h[0])*4:]))
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		switch c := bytes.Compare(p.idAt(mid), h[:]); {
		case c == 0:
			off, err := p.offsetOf(mid)
			return off, err == nil, err
		case c < 0:
			lo = mid + 1
		default:
			hi = mid
		}
	}
	return 0, false, nil
}

// idAt is the object id of the i-th entry of the index, in place.
func (p *packFile) idAt(i int) []byte {
	if p.version == 1 {
		at := fanout + 4 + i*24
		return p.idx[at : at+20]
	}
	at := idxHeader + fanout + i*20
	return p.idx[at : at+20]
}

// offsetOf is the pack offset of the i-th entry of the index.
func (p *packFile) offsetOf(i int) (int64, error) {
	if p.version == 1 {
		return int64(binary.BigEndian.Uint32(p.idx[fanout+i*24:])), nil
	}
	n := p.count
	offs := idxHeader + fanout + n*24
	v := binary.BigEndian.Uint32(p.idx[offs+i*4:])
	if v&0x80000000 == 0 {
		return int64(v), nil
	}
	large := offs + n*4 + int(v&0x7fffffff)*8
	if large+8 > len(p.idx)-40 {
		return 0, fmt.Errorf("%s.idx: %w: large offset out of range", p.name, errPackCorrupt)
	}
	off := binary.BigEndian.Uint64(p.idx[large:])
	if off > math.MaxInt64 {
		return 0, fmt.Errorf("%s.idx: %w: large offset %d out of range", p.name, errPackCorrupt, off)
	}
	return int64(off), nil
}

// mayPass reports whether err, an open or a read that failed, is one the
// system may not give again (Unreadable, neither a permission nor a file
// that is not a regular file: the limit on open files met, an I/O error,
// memory), so a pack that met it is not remembered as failed: a later read
// of the same process opens it again.
func mayPass(err error) bool {
	return Unreadable(err) && !errors.Is(err, fs.ErrPermission) && !ObjectNotRegular(err)
}

// packMin is the fewest bytes a .pack holds: its 12-byte header and its
// 20-byte trailer.
const packMin = 12 + 20

// openPack opens the .pack on first use and checks its header against the
// index.
func (p *packFile) openPack() error {
	if p.pack != nil || p.packErr != nil {
		return p.packErr
	}
	var f *os.File
	var err error
	if p.openFile != nil {
		f, err = p.openFile()
	} else {
		f, err = openRead(filepath.Join(p.dir, p.name+".pack"))
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return errPackGone // not remembered: it may come back
		}
		if !mayPass(err) {
			p.packErr = err
		}
		return err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return err
	}
	var hdr [12]byte
	if fi.Size() < packMin {
		// shorter than a pack's header and trailer, whatever a read
		// of it would give (a link to /proc/self/mem says 0 bytes and
		// fails its reads with EIO): damage, not a failed read
		f.Close()
		p.packErr = fmt.Errorf("%s.pack: %w: %d bytes, less than a pack's header and trailer", p.name, errPackCorrupt, fi.Size())
		return p.packErr
	}
	_, err = f.ReadAt(hdr[:], 0)
	if err != nil && !errors.Is(err, io.EOF) {
		// the system failed to read it (EIO): that says nothing of
		// its header, and is not remembered
		f.Close()
		return fmt.Errorf("%s.pack: read its header: %w", p.name, err)
	}
	if err != nil || !bytes.Equal(hdr[:4], []byte("PACK")) {
		f.Close()
		p.packErr = fmt.Errorf("%s.pack: %w: bad header", p.name, errPackCorrupt)
		return p.packErr
	}
	if v := binary.BigEndian.Uint32(hdr[4:]); v != 2 && v != 3 {
		f.Close()
		p.packErr = fmt.Errorf("%s.pack: %w: version %d", p.name, errPackCorrupt, v)
		return p.packErr
	}
	if c := binary.BigEndian.Uint32(hdr[8:]); int64(c) != int64(p.count) {
		f.Close()
		p.packErr = fmt.Errorf("%s.pack: %w: %d objects, its index lists %d", p.name, errPackCorrupt, c, p.count)
		return p.packErr
	}
	p.pack, p.packFile, p.packSize = f, f, fi.Size()
	if canMap {
		if data, unmap, trim, err := mapFileTrimmable(f, fi.Size()); err == nil {
			p.mapped, p.unmap, p.trimPack = data, unmap, trim
			p.pack = bytes.NewReader(data)
		}
	}
	return nil
}

// entry is the header of one pack entry.
type entry struct {
	t       plumbing.ObjectType // 1-4, or OFS/REF delta
	size    int64               // inflated size of the content or delta
	data    int64               // offset of the compressed data
	baseOff int64               // OFS_DELTA: the base's offset
	baseID  plumbing.Hash       // REF_DELTA: the base's name
}

// entryHeader decodes the pack entry header at the start of b: the type
// and size, for an OFS_DELTA the distance back to its base, for a
// REF_DELTA the base's name (e.baseID); i is the header's length. why says
// what is wrong when b does not start with a whole, valid header.
func entryHeader(b []byte) (e entry, back int64, i int, why string) {
	if len(b) == 0 {
		return entry{}, 0, 0, "truncated entry header"
	}
	c := b[i]
	i++
	e = entry{t: plumbing.ObjectType(c >> 4 & 7), size: int64(c & 0x0f)}
	for shift := 4; c&0x80 != 0; shift += 7 {
		if i >= len(b) || shift > 56 {
			return entry{}, 0, 0, "size header too long"
		}
		c = b[i]
		i++
		e.size |= int64(c&0x7f) << shift
	}
	switch e.t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	case plumbing.OFSDeltaObject:
		if i >= len(b) {
			return entry{}, 0, 0, "truncated delta offset"
		}
		c = b[i]
		i++
		back = int64(c & 0x7f)
		for c&0x80 != 0 {
			if i >= len(b) || back >= 1<<56 {
				return entry{}, 0, 0, "delta offset too long"
			}
			c = b[i]
			i++
			back = (back+1)<<7 | int64(c&0x7f)
		}
	case plumbing.REFDeltaObject:
		if i+20 > len(b) {
			return entry{}, 0, 0, "truncated delta base id"
		}
		copy(e.baseID[:], b[i:i+20])
		i += 20
	default:
		return entry{}, 0, 0, fmt.Sprintf("object type %d", e.t)
	}
	return e, back, i, ""
}

// entryAt parses the entry header at off.
func (p *packFile) entryAt(off int64) (entry, error) {
	bad := func(why string) (entry, error) {
		return entry{}, fmt.Errorf("%s.pack offset %d: %w: %s", p.name, off, errPackCorrupt, why)
	}
	end := p.packSize - 20
	if off < 12 || off >= end {
		return bad("offset outside the pack")
	}
	p.headerReads.Add(1)
	var buf [64]byte
	n, err := p.pack.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
	if n == 0 && err != nil {
		return entry{}, err
	}
	e, back, i, why := entryHeader(buf[:n])
	if why != "" {
		return bad(why)
	}
	if e.t == plumbing.OFSDeltaObject {
		if back <= 0 || back >= off {
			return bad("delta base outside the pack")
		}
		e.baseOff = off - back
	}
	e.data = off + int64(i)
	// its content is read next: counted at its inflated size (what
	// it takes compressed is no more, but for a few bytes), as far as
	// the pack goes, and the pages around it
	p.touch(entryBytes + min(e.size, end-e.data))
	return e, nil
}

// inflate returns the n bytes compressed at e.data: decoded in place by fi
// when the pack is mapped, else (and whenever fi does not decode it) by
// zr, whose result and errors are the reference.
func (p *packFile) inflate(e entry, zr *zlibReader, fi *inflater) ([]byte, error) {
	return p.inflateInto(e, zr, fi, nil)
}

// inflateInto is inflate that decodes into dst when it is large enough
// (the result is then dst[:n]) and fi decodes the entry in place.
func (p *packFile) inflateInto(e entry, zr *zlibReader, fi *inflater, dst []byte) ([]byte, error) {
	var src io.Reader
	if p.mapped != nil {
		if data, ok := fi.inflateZlibInto(p.mapped[e.data:p.packSize-20], e.size, dst); ok {
			return data, nil
		}
		src = bytes.NewReader(p.mapped[e.data : p.packSize-20]) // a ByteReader: read in place
	} else {
		src = io.NewSectionReader(p.pack, e.data, p.packSize-20-e.data)
	}
	if err := zr.reset(src); err != nil {
		return nil, fmt.Errorf("%s.pack offset %d: %w: %w", p.name, e.data, errPackCorrupt, err)
	}
	data, err := readExactly(zr.r, e.size)
	if err != nil {
		return nil, fmt.Errorf("%s.pack offset %d: %w: %w", p.name, e.data, errPackCorrupt, err)
	}
	return data, nil
}

// zlibReader is a reusable inflater.
type zlibReader struct {
	br *bufio.Reader
	r  io.ReadCloser
}

func (z *zlibReader) reset(src io.Reader) error {
	if _, ok := src.(io.ByteReader); !ok {
		// flate reads ahead from anything that is not a ByteReader.
		if z.br == nil {
			z.br = bufio.NewReaderSize(src, 4<<10)
		} else {
			z.br.Reset(src)
		}
		src = z.br
	}
	if z.r == nil {
		r, err := zlib.NewReader(src)
		if err != nil {
			return err
		}
		z.r = r
		return nil
	}
	return z.r.(zlib.Resetter).Reset(src, nil)
}

// maxDeltaChain bounds a chain of OFS_DELTA entries (git's default depth
// is 50; each base lies before its delta, so a chain cannot loop).
const maxDeltaChain = 10000

// readPackedAt returns the object at off in p, resolving deltas. Results
// come from and go to d.cache; what is returned is the caller's own.
func (d *odb) readPackedAt(p *packFile, off int64, depth int) (plumbing.ObjectType, []byte, error) {
	return d.readPackedInto(p, off, depth, nil)
}

// readPackedInto is readPackedAt that may return the object in dst's
// memory (dst[:n], when its capacity holds it) rather than in a buffer of
// its own: a ReadBlobs reader that reuses its buffers (ReuseBuffers). No
// part of dst goes into d.cache.
func (d *odb) readPackedInto(p *packFile, off int64, depth int, dst []byte) (plumbing.ObjectType, []byte, error) {
	return d.readPackedAtMost(p, off, depth, dst, -1)
}

// readPackedAtMost is readPackedInto for an object of at most max bytes
// (max < 0: any size). A larger one is refused with an error wrapping
// ErrTooLarge before its content is inflated: a whole object by its
// entry's header, a delta by the result size at the start of the delta,
// which is inflated before its bases and then applied (once).
func (d *odb) readPackedAtMost(p *packFile, off int64, depth int, dst []byte, max int64) (plumbing.ObjectType, []byte, error) {
	if err := p.openPack(); err != nil {
		return 0, nil, err
	}
	if t, data, ok := d.cache.get(p, off); ok {
		if max >= 0 && int64(len(data)) > max {
			return 0, nil, tooLargeSize(int64(len(data)), max)
		}
		if len(data) <= cap(dst) {
			return t, append(dst[:0], data...), nil
		}
		return t, bytes.Clone(data), nil
	}
	zr := &d.zr
	type link struct {
		off int64
		e   entry
	}
	var chain []link
	var top []byte // the requested entry's delta, inflated by boundEntry
	var baseT plumbing.ObjectType
	var base []byte
	cur := off
	for {
		if t, data, ok := d.cache.get(p, cur); ok {
			baseT, base = t, data
			break
		}
		e, err := p.entryAt(cur)
		if err != nil {
			return 0, nil, err
		}
		if cur == off && max >= 0 {
			if top, err = d.boundEntry(p, e, max); err != nil {
				return 0, nil, err
			}
		}
		if e.t == plumbing.OFSDeltaObject || e.t == plumbing.REFDeltaObject {
			chain = append(chain, link{cur, e})
			if len(chain) > maxDeltaChain {
				return 0, nil, fmt.Errorf("%s.pack offset %d: %w: delta chain longer than %d", p.name, off, errPackCorrupt, maxDeltaChain)
			}
			if e.t == plumbing.OFSDeltaObject {
				cur = e.baseOff
				continue
			}
			// REF_DELTA: the base is normally in the same pack.
			if bo, ok, err := p.find(e.baseID); err != nil {
				return 0, nil, err
			} else if ok {
				cur = bo
				continue
			}
			t, data, err := d.readDepth(e.baseID, depth+1)
			if err != nil {
				if errors.Is(err, plumbing.ErrObjectNotFound) {
					err = fmt.Errorf("%s.pack offset %d: %w: delta base %s is missing", p.name, cur, errPackCorrupt, e.baseID)
				}
				return 0, nil, err
			}
			baseT, base = t, data
			break
		}
		into := dst
		if len(chain) > 0 {
			into = nil // a delta base, kept in d.cache
		}
		data, err := p.inflateInto(e, zr, &d.fi, into)
		if err != nil {
			return 0, nil, err
		}
		baseT, base = e.t, data
		if len(chain) > 0 {
			d.cache.put(p, cur, baseT, base)
		}
		break
	}
	if len(chain) == 0 {
		// Inflated just now: the caller's. Small objects are kept too (trees
		// and commits are read again and again by walks), except by a
		// ReadBlobs worker, which reads each blob once.
		if len(base) <= finalCacheMax && !d.private {
			d.cache.put(p, off, baseT, bytes.Clone(base))
		}
		return baseT, base, nil
	}
	for i := len(chain) - 1; i >= 0; i-- {
		delta := top
		if i > 0 || delta == nil {
			var err error
			if delta, err = p.inflate(chain[i].e, zr, &d.fi); err != nil {
				return 0, nil, err
			}
		}
		into := dst
		if i > 0 {
			into = nil // a delta base, kept in d.cache
		}
		out, err := applyDeltaInto(into, base, delta)
		if err != nil {
			return 0, nil, fmt.Errorf("%s.pack offset %d: %w: %w", p.name, chain[i].off, errPackCorrupt, err)
		}
		base = out
		if i > 0 {
			d.cache.put(p, chain[i].off, baseT, base)
		}
	}
	if len(base) <= finalCacheMax && !d.private {
		d.cache.put(p, off, baseT, bytes.Clone(base))
	}
	return baseT, base, nil
}

// applyDelta applies a git delta (source size, target size, then copy and
// insert instructions) to base.
func applyDelta(base, delta []byte) ([]byte, error) {
	return applyDeltaInto(nil, base, delta)
}

// applyDeltaInto is applyDelta that writes the result into dst's memory
// when its capacity holds the size the delta declares.
func applyDeltaInto(into, base, delta []byte) ([]byte, error) {
	src, delta, ok := deltaSize(delta)
	if !ok || src != uint64(len(base)) {
		return nil, errors.New("delta does not fit its base")
	}
	dst, delta, ok := deltaSize(delta)
	if !ok {
		return nil, errors.New("bad delta header")
	}
	var out []byte
	if dst <= uint64(cap(into)) {
		out = into[:0]
	} else {
		out = make([]byte, 0, min(dst, 8<<20))
	}
	for len(delta) > 0 {
		op := delta[0]
		delta = delta[1:]
		switch {
		case op&0x80 != 0:
			var off, n uint64
			for i := 0; i < 4; i++ {
				if op&(1<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					off |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			for i := 0; i < 3; i++ {
				if op&(0x10<<i) != 0 {
					if len(delta) == 0 {
						return nil, errors.New("truncated copy")
					}
					n |= uint64(delta[0]) << (8 * i)
					delta = delta[1:]
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > uint64(len(base)) || uint64(len(out))+n > dst {
				return nil, errors.New("copy outside the base or the target")
			}
			out = append(out, base[off:off+n]...)
		case op != 0:
			n := uint64(op)
			if n > uint64(len(delta)) || uint64(len(out))+n > dst {
				return nil, errors.New("insert outside the delta or the target")
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
		default:
			return nil, errors.New("reserved delta instruction 0")
		}
	}
	if uint64(len(out)) != dst {
		return nil, errors.New("delta result shorter than its header says")
	}
	return out, nil
}

// deltaSize reads a little-endian base-128 size from the start of a delta.
func deltaSize(b []byte) (uint64, []byte, bool) {
	var v uint64
	for i, shift := 0, 0; i < len(b) && shift < 64; i, shift = i+1, shift+7 {
		v |= uint64(b[i]&0x7f) << shift
		if b[i]&0x80 == 0 {
			return v, b[i+1:], true
		}
	}
	return 0, nil, false
}

// baseCache holds recently resolved delta bases, bounded in bytes. Its
// slices are never handed out (readPackedAt clones them).
type baseCache struct {
	m     map[baseKey]baseVal
	order []baseKey // insertion order, for eviction
	bytes int
	limit int // bytes kept at most; 0: baseCacheBytes
}

type baseKey struct {
	p   *packFile
	off int64
}

type baseVal struct {
	t    plumbing.ObjectType
	data []byte
}

const (
	baseCacheBytes = 32 << 20
	baseCacheMax   = 4 << 20  // larger bases are not kept
	finalCacheMax  = 64 << 10 // nor objects read that are no base (yet)
)

func (c *baseCache) get(p *packFile, off int64) (plumbing.ObjectType, []byte, bool) {
	v, ok := c.m[baseKey{p, off}]
	return v.t, v.data, ok
}

func (c *baseCache) put(p *packFile, off int64, t plumbing.ObjectType, data []byte) {
	if len(data) > baseCacheMax {
		return
	}
	k := baseKey{p, off}
	if _, ok := c.m[k]; ok {
		return
	}
	if c.m == nil {
		c.m = map[baseKey]baseVal{}
	}
	limit := c.limit
	if limit == 0 {
		limit = baseCacheBytes
	}
	for c.bytes+len(data) > limit && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		c.bytes -= len(c.m[old].data)
		delete(c.m, old)
	}
	c.m[k] = baseVal{t, data}
	c.order = append(c.order, k)
	c.bytes += len(data)
}

// dropPack forgets the bases of a pack that is being closed.
func (c *baseCache) dropPack(p *packFile) {
	keep := c.order[:0]
	for _, k := range c.order {
		if k.p == p {
			c.bytes -= len(c.m[k].data)
			delete(c.m, k)
			continue
		}
		keep = append(keep, k)
	}
	c.order = keep
}
