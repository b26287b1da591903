package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"hash"
	"hash/adler32"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/go-git/go-git/v5/plumbing"
)

// Objects written through a Store are held back until the next Sync or
// Update, then published in one go: as loose objects when there are few, as
// one pack (and its index) when there are at least packThreshold of them,
// so a run that records a thousand documents creates two files instead of
// several thousand. Reads see held objects at once; other processes see
// them once they are published, which always happens before any ref can
// name them.
//
// Only the first few objects are held in memory. Past packThreshold objects
// (or memLimit bytes) every object is compressed as it arrives into a spill
// file, an unnamed temporary file in objects/pack, and only its place there
// is remembered: a run holds per-object state, not per-object bytes. The
// spill has no name, so a killed writer leaves nothing behind and no sweep
// can take it from a slow writer; publishing copies it behind a pack header
// into a tmp_pack_* file that is renamed into place.
const (
	packThreshold = 64
	memLimit      = 8 << 20 // bytes held in memory before objects are spilled
	// smallPackMin is the fewest objects a flush publishes as a small pack
	// (writeSmallPack) rather than as loose files: two files (the pack and
	// its index) instead of one a object. A one-document run writes about
	// a dozen objects.
	smallPackMin = 3
	// smallPackBytes bounds the packs a maintenance pass gathers
	// (listSmallPacks): a pack this large is left to the roll-ups, which
	// copy it, where the pass would inflate, search and compress it again.
	smallPackBytes = 1 << 20
)

type bufObj struct {
	t    plumbing.ObjectType
	data []byte
}

// spilledObj is where a spilled object's pack entry is in the spill file:
// its header starts at off, and its zlib stream runs from the end of the
// header to the next object's off (or the end of the file). 40 bytes an
// object, with 4 to 8 in spillFile.slots.
type spilledObj struct {
	h    plumbing.Hash
	crc  uint32
	off  int64
	size uint32
	t    plumbing.ObjectType
}

// spillFile is the unnamed file spilled objects are written to, as pack
// entries without the pack header, and the index of what it holds: objs in
// the order written, and slots, an open-addressing table of their indexes
// plus one (0: empty) keyed by the first bytes of the id, at most three
// quarters full. A map from id to index cost about three times as much.
type spillFile struct {
	f     *os.File
	w     *bufio.Writer
	zw    *zlib.Writer // BestSpeed, for documents
	z     bytes.Buffer
	off   int64
	objs  objList
	slots []int32
}

// objChunk is how many spilled objects objList holds a chunk (40 KB).
const objChunk = 1024

// objList is a list of spilled objects in chunks of objChunk: appending
// never copies what is held (append grew one slice by a quarter at a time
// at this size, allocating five times the final 2 MB of a 10,000-document
// run and holding old and new while it copied).
type objList struct {
	chunks [][]spilledObj
	n      int
}

func (l *objList) len() int { return l.n }

func (l *objList) at(i int) *spilledObj { return &l.chunks[i/objChunk][i%objChunk] }

func (l *objList) push(o spilledObj) {
	if l.n%objChunk == 0 && l.n/objChunk == len(l.chunks) {
		l.chunks = append(l.chunks, make([]spilledObj, objChunk))
	}
	*l.at(l.n) = o
	l.n++
}

// pop takes the last object off and returns it.
func (l *objList) pop() spilledObj {
	l.n--
	return *l.at(l.n)
}

// find returns the index of h in objs.
func (sp *spillFile) find(h plumbing.Hash) (int, bool) {
	if len(sp.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(sp.slots) - 1)
	for i := binary.LittleEndian.Uint64(h[:8]) & mask; ; i = (i + 1) & mask {
		j := sp.slots[i]
		if j == 0 {
			return 0, false
		}
		if sp.objs.at(int(j-1)).h == h {
			return int(j - 1), true
		}
	}
}

// index adds objs[n] (not yet in the table) to slots, growing it first when
// it would be more than three quarters full.
func (sp *spillFile) index(n int) {
	if 4*(n+1) > 3*len(sp.slots) {
		size := 1024
		for 4*(n+1) > 3*size {
			size *= 2
		}
		sp.slots = make([]int32, size)
		for i := 0; i < n; i++ {
			sp.place(i)
		}
	}
	sp.place(n)
}

func (sp *spillFile) place(n int) {
	mask := uint64(len(sp.slots) - 1)
	i := binary.LittleEndian.Uint64(sp.objs.at(n).h[:8]) & mask
	for sp.slots[i] != 0 {
		i = (i + 1) & mask
	}
	sp.slots[i] = int32(n + 1)
}

// zspan returns where objs[i]'s zlib stream is in the file.
func (sp *spillFile) zspan(i int) (off, n int64) {
	o := sp.objs.at(i)
	end := sp.off
	if i+1 < sp.objs.len() {
		end = sp.objs.at(i + 1).off
	}
	start := o.off + int64(packHeaderLen(int(o.size)))
	return start, end - start
}

// storeBelow is the size under which a spilled object is stored in its zlib
// stream without compression: the records of a run (observations,
// definitions, trees, commits) are a few hundred bytes each, where building
// deflate's Huffman tables cost more CPU than the whole rest of the write
// and saved a few hundred bytes that the next gc recompresses anyway.
const storeBelow = 1024

// maxSpilled is the largest object that is spilled; a larger one (which
// PutBlob's caller held in memory anyway) stays in memory.
const maxSpilled = 1<<32 - 1

// isBuffered reports whether h is held for the next flush, in memory or
// spilled. Called with s.mu held.
func (s *repo) isBuffered(h plumbing.Hash) bool {
	if _, ok := s.buf[h]; ok {
		return true
	}
	if s.spill != nil {
		_, ok := s.spill.find(h)
		return ok
	}
	return false
}

// bufCount is how many objects are held for the next flush.
func (s *repo) bufCount() int {
	n := len(s.bufOrder)
	if s.spill != nil {
		n += s.spill.objs.len()
	}
	return n
}

// buffer adds an object to the write buffer. Called with s.mu held.
func (s *repo) buffer(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	if s.isBuffered(h) {
		return nil
	}
	if s.spill != nil && len(data) <= maxSpilled {
		if err := s.spill.add(h, t, data); err != nil {
			s.dropSpill(err)
			return diskError(fmt.Errorf("write pack: %w", err))
		}
		return nil
	}
	if s.buf == nil {
		s.buf = map[plumbing.Hash]bufObj{}
	}
	cp := make([]byte, len(data))
	copy(cp, data)
	s.buf[h] = bufObj{t: t, data: cp}
	s.bufOrder = append(s.bufOrder, h)
	s.bufBytes += len(cp)
	if s.spill == nil && (s.bufCount() >= packThreshold || s.bufBytes > memLimit) {
		if err := s.startSpill(); err != nil {
			return diskError(fmt.Errorf("write pack: %w", err))
		}
	}
	return nil
}

// startSpill creates the spill file and moves the objects held in memory
// into it. On failure they stay in memory. Called with s.mu held.
func (s *repo) startSpill() error {
	f, err := s.createTemp(filepath.Join(s.path, "objects", "pack"), "tmp_pack_")
	if err != nil {
		return err
	}
	// Unnamed from here on where the system allows it (not on Windows,
	// where the name stays until Close and the stale sweep covers it).
	os.Remove(f.Name())
	zw, _ := zlib.NewWriterLevel(nil, zlib.BestSpeed)
	sp := &spillFile{f: f, w: bufio.NewWriterSize(tmpWriter(f), 256<<10), zw: zw}
	var kept []plumbing.Hash
	for _, h := range s.bufOrder {
		b := s.buf[h]
		if len(b.data) > maxSpilled {
			kept = append(kept, h)
			continue
		}
		if err := sp.add(h, b.t, b.data); err != nil {
			sp.close()
			return err
		}
	}
	held := 0
	for h := range s.buf {
		if _, ok := sp.find(h); ok {
			delete(s.buf, h)
		} else {
			held += len(s.buf[h].data)
		}
	}
	s.spill, s.bufOrder, s.bufBytes = sp, kept, held
	return nil
}

// add compresses one object into the spill file.
func (sp *spillFile) add(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	head := packHeader(t, len(data))
	if _, err := sp.w.Write(head); err != nil {
		return err
	}
	// The zlib stream goes straight to the file through a writer that
	// takes the pack entry's CRC and length as it passes: a large object
	// (a 10,000-entry manifest) is not held compressed as well.
	cw := crcWriter{w: sp.w, crc: crc32.ChecksumIEEE(head)}
	if len(data) < storeBelow {
		sp.z.Reset()
		appendStoredZlib(&sp.z, data)
		cw.Write(sp.z.Bytes())
	} else {
		sp.zw.Reset(&cw)
		sp.zw.Write(data)
		sp.zw.Close()
	}
	if cw.err != nil {
		return cw.err
	}
	if cw.n > maxSpilled {
		return fmt.Errorf("object %s: %d compressed bytes: too large for the spill file", h, cw.n)
	}
	o := spilledObj{h: h, t: t, size: uint32(len(data)), off: sp.off, crc: cw.crc}
	sp.off += int64(len(head)) + cw.n
	sp.objs.push(o)
	sp.index(sp.objs.len() - 1)
	return nil
}

// PutBlobFrom stores the size bytes r yields as a blob without holding
// them when a batch is spilling (pack.go): they are hashed and written into
// the spill file as they are read, and taken back off its end when the blob
// turns out to be stored already. It is meant for a large blob that is
// read whole and often (a run's manifest.json), and stores it without
// compression (zlib stored blocks): reading it then costs a copy instead of
// inflating, for 4 MB more on disk for a 10,000-entry manifest (6 MB
// against 1.5 MB). Without a spill, or below storeBelow bytes, the bytes
// are read into memory and stored as PutBlob stores them. r yielding more
// or fewer than size bytes is an error, and nothing is stored.
func (s *repo) PutBlobFrom(size int64, r io.Reader) (OID, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errClosed
	}
	if s.spill == nil || size > maxSpilled || size < storeBelow {
		data, err := readExactly(r, size)
		if err != nil {
			return "", fmt.Errorf("write blob: %w", err)
		}
		return s.putObject(plumbing.BlobObject, data)
	}
	sp := s.spill
	h, werr, rerr := sp.addFrom(plumbing.BlobObject, size, r)
	if werr != nil {
		s.dropSpill(werr)
		return "", diskError(fmt.Errorf("write pack: %w", werr))
	}
	if rerr != nil {
		return "", fmt.Errorf("write blob: %w", rerr)
	}
	// The checks of putObject, after the fact: an object stored already
	// is taken back off the spill.
	if s.storedAlready(h) {
		if err := sp.dropLast(); err != nil {
			s.dropSpill(err)
			return "", diskError(fmt.Errorf("write pack: %w", err))
		}
		return OID(h.String()), nil
	}
	sp.index(sp.objs.len() - 1)
	return OID(h.String()), nil
}

// addFrom is add of an object read from r, hashed as it is compressed; the
// object is appended to objs but not indexed (PutBlobFrom indexes it or
// takes it back with dropLast). werr is a failed write to the spill file,
// which leaves it unusable; rerr a failed or wrong-sized read, after which
// the spill file is as it was.
func (sp *spillFile) addFrom(t plumbing.ObjectType, size int64, r io.Reader) (h plumbing.Hash, werr, rerr error) {
	start := sp.off
	head := packHeader(t, int(size))
	if _, err := sp.w.Write(head); err != nil {
		return h, err, nil
	}
	cw := crcWriter{w: sp.w, crc: crc32.ChecksumIEEE(head)}
	zs := storedWriter{w: &cw, sum: adler32.New()}
	hasher := plumbing.NewHasher(t, size)
	var n int64
	for {
		k, err := r.Read(zs.room())
		if k > 0 {
			if n += int64(k); n > size {
				rerr = fmt.Errorf("more than the %d bytes announced", size)
				break
			}
			zs.wrote(k, hasher)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	if rerr == nil && n < size {
		rerr = fmt.Errorf("%d bytes, %d announced: %w", n, size, io.ErrUnexpectedEOF)
	}
	zs.close()
	if cw.err != nil {
		return h, cw.err, nil
	}
	if cw.n > maxSpilled {
		rerr = fmt.Errorf("%d compressed bytes: too large for the spill file", cw.n)
	}
	if rerr != nil {
		if err := sp.truncate(start); err != nil {
			return h, err, nil
		}
		return h, nil, rerr
	}
	h = hasher.Sum()
	sp.objs.push(spilledObj{h: h, t: t, size: uint32(size), off: start, crc: cw.crc})
	sp.off = start + int64(len(head)) + cw.n
	return h, nil, nil
}

// dropLast takes the last object, not indexed, back off the spill.
func (sp *spillFile) dropLast() error {
	last := sp.objs.pop()
	return sp.truncate(last.off)
}

// truncate cuts the spill file back to off bytes: what is buffered is
// written first, and the file's offset moved back, so that the next object
// is written over what came after off (writePack copies only sp.off bytes).
func (sp *spillFile) truncate(off int64) error {
	if err := sp.w.Flush(); err != nil {
		return err
	}
	if _, err := sp.f.Seek(off, io.SeekStart); err != nil {
		return err
	}
	sp.off = off
	return nil
}

// storedWriter writes a zlib stream of stored blocks to w: the data is
// read into its buffer (room, then wrote), and each full buffer becomes one
// stored block; close writes what is left, an empty final block and the
// Adler-32 checksum. Write errors are w's to keep (crcWriter).
type storedWriter struct {
	w       io.Writer
	sum     hash.Hash32
	buf     [5 + 0xffff]byte // a block: its header, then its data
	n       int              // data bytes in buf
	started bool
}

// room is where the next bytes go.
func (z *storedWriter) room() []byte { return z.buf[5+z.n:] }

// wrote takes k bytes read into room, hashing them with h too.
func (z *storedWriter) wrote(k int, h io.Writer) {
	data := z.buf[5+z.n : 5+z.n+k]
	h.Write(data)
	z.sum.Write(data)
	if z.n += k; z.n == 0xffff {
		z.block()
	}
}

// block writes the buffered data as one stored block (BFINAL 0).
func (z *storedWriter) block() {
	if !z.started {
		z.w.Write([]byte{0x78, 0x01})
		z.started = true
	}
	if z.n == 0 {
		return
	}
	z.buf[0] = 0
	binary.LittleEndian.PutUint16(z.buf[1:], uint16(z.n))
	binary.LittleEndian.PutUint16(z.buf[3:], ^uint16(z.n))
	z.w.Write(z.buf[:5+z.n])
	z.n = 0
}

func (z *storedWriter) close() {
	z.block()
	var end [9]byte
	end[0] = 1 // BFINAL 1, stored, empty
	binary.LittleEndian.PutUint16(end[3:], 0xffff)
	binary.BigEndian.PutUint32(end[5:], z.sum.Sum32())
	z.w.Write(end[:])
}

// crcWriter writes to w, keeping the CRC-32 (IEEE) and count of what
// passed and the first error.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
	err error
}

func (c *crcWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, crc32.IEEETable, p[:n])
	c.n += int64(n)
	c.err = err
	return n, err
}

// appendStoredZlib appends the parts, as one run of bytes, to z as the
// zlib stream zlib.NewWriterLevel(NoCompression) writes for fewer than
// 64 KiB: the header, one stored block, an empty final stored block and
// the Adler-32 checksum (TestStoredZlibMatchesWriter), without the
// compressor the writer allocates (650 KB) and resets for each object.
func appendStoredZlib(z *bytes.Buffer, parts ...[]byte) {
	size := 0
	for _, p := range parts {
		size += len(p)
	}
	var b [11]byte
	b[0], b[1] = 0x78, 0x01
	n := 2
	if size > 0 {
		b[2] = 0 // BFINAL 0, BTYPE 00 (stored), to the byte boundary
		binary.LittleEndian.PutUint16(b[3:], uint16(size))
		binary.LittleEndian.PutUint16(b[5:], ^uint16(size))
		n = 7
	}
	z.Write(b[:n])
	start := z.Len()
	for _, p := range parts {
		z.Write(p)
	}
	sum := adler32.Checksum(z.Bytes()[start:])
	b[0] = 1 // BFINAL 1, BTYPE 00, empty
	binary.LittleEndian.PutUint16(b[1:], 0)
	binary.LittleEndian.PutUint16(b[3:], 0xffff)
	binary.BigEndian.PutUint32(b[5:], sum)
	z.Write(b[:9])
}

// packHeaderLen is len(packHeader(t, size)).
func packHeaderLen(size int) int {
	n := 1
	for size >>= 4; size > 0; size >>= 7 {
		n++
	}
	return n
}

// read inflates a spilled object.
func (sp *spillFile) read(h plumbing.Hash) (plumbing.ObjectType, []byte, bool) {
	i, ok := sp.find(h)
	if !ok {
		return 0, nil, false
	}
	o := *sp.objs.at(i)
	if err := sp.w.Flush(); err != nil {
		return 0, nil, false
	}
	zoff, zlen := sp.zspan(i)
	zr, err := zlib.NewReader(io.NewSectionReader(sp.f, zoff, zlen))
	if err != nil {
		return 0, nil, false
	}
	defer zr.Close()
	data := make([]byte, o.size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return 0, nil, false
	}
	return o.t, data, true
}

func (sp *spillFile) close() {
	sp.f.Close()
	os.Remove(sp.f.Name()) // where the name could not be removed at once
}

// dropSpill abandons the spill file after a failed write: the objects in it
// are forgotten (no ref can name them yet, and a later write stores them
// anew) and err is kept for the next flush to report. Called with s.mu held.
func (s *repo) dropSpill(err error) {
	s.spill.close()
	s.spill = nil
	s.spillErr = err
}

// buffered returns an object still in the write buffer. Called with s.mu
// held.
func (s *repo) buffered(h plumbing.Hash) (plumbing.EncodedObject, []byte, bool) {
	var t plumbing.ObjectType
	var data []byte
	if b, ok := s.buf[h]; ok {
		t, data = b.t, b.data
	} else if s.spill == nil {
		return nil, nil, false
	} else if t, data, ok = s.spill.read(h); !ok {
		return nil, nil, false
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(t)
	mo.SetSize(int64(len(data)))
	mo.Write(data)
	return mo, data, true
}

// flush writes the buffered objects, adding the files written to
// s.pending for the next sync. Called with s.mu held.
func (s *repo) flush() error {
	if err := s.spillErr; err != nil {
		s.spillErr = nil
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	if s.bufCount() == 0 {
		return nil
	}
	var err error
	if s.spill == nil && len(s.bufOrder) >= packThreshold {
		err = s.startSpill()
	}
	small := false
	if err == nil && s.spill != nil {
		err = s.writePack()
	} else if err == nil && len(s.bufOrder) >= smallPackMin && s.smallPacksOn() {
		err, small = s.writeSmallPack(), true
	}
	if err == nil && !small {
		// what was not spilled: a few objects, or ones too large to spill
		hexes := make([]string, 0, len(s.bufOrder))
		for _, h := range s.bufOrder {
			b := s.buf[h]
			if err = s.writeLoose(h, b.t, b.data); err != nil {
				break
			}
			hexes = append(hexes, h.String())
		}
		s.noteLooseDirs(hexes)
	}
	if err != nil {
		return err
	}
	s.buf, s.bufOrder, s.bufBytes = nil, nil, 0
	s.fanout, s.fanLooks = [256]uint8{}, 0
	s.sweepStale()
	return nil
}

// writePack publishes the spill file as one pack and its version 2 index:
// the pack header, then the spilled entries, copied into a tmp_pack_* file
// that is renamed into place before the index (git ignores a pack without
// an index). The spill is closed, whatever the outcome: on failure its
// objects are forgotten as in dropSpill. Called with s.mu held.
func (s *repo) writePack() (err error) {
	sp := s.spill
	defer func() {
		if err != nil {
			s.dropSpill(err)
			s.spillErr = nil
			err = diskError(fmt.Errorf("write pack: %w", err))
		} else {
			sp.close()
			s.spill = nil
		}
	}()
	if err := sp.w.Flush(); err != nil {
		return err
	}
	dir := filepath.Join(s.path, "objects", "pack")
	tmp, err := s.createTemp(dir, "tmp_pack_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	// The pack index is built from the spill's own list of objects,
	// through a permutation sorted by id (4 bytes an object), not from a
	// sorted copy of the list (40 bytes an object, 2 MB of a
	// 10,000-document run, held beside it).
	// The table that finds an object by id is not needed past here.
	sp.slots = nil
	n := sp.objs.len()
	order := make([]int32, n)
	for i := range order {
		order[i] = int32(i)
	}
	sort.Slice(order, func(i, j int) bool {
		return bytes.Compare(sp.objs.at(int(order[i])).h[:], sp.objs.at(int(order[j])).h[:]) < 0
	})
	entry := func(i int) indexEntry {
		o := sp.objs.at(int(order[i]))
		return indexEntry{h: o.h, off: uint64(12 + o.off), crc: o.crc}
	}
	sum := sha1.New()
	mw := io.MultiWriter(tmpWriter(tmp), sum)
	hdr := packFileHeader(n)
	if _, err := mw.Write(hdr[:]); err != nil {
		tmp.Close()
		return err
	}
	if _, err := io.CopyBuffer(mw, io.NewSectionReader(sp.f, 0, sp.off), make([]byte, 256<<10)); err != nil {
		tmp.Close()
		return err
	}
	packSum := sum.Sum(nil)
	if _, err := tmpWriter(tmp).Write(packSum); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(s.perm.object()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}

	_, err = s.publishPack(dir, tmp.Name(), packSum, encodeSortedIndex(n, entry, packSum))
	return err
}

// publishPack renames the finished temporary pack tmp in dir to the name
// its checksum sum gives it, writes its index idx beside it, adds both to
// the files the write's sync makes durable and has readers list the packs
// again. rel is the pack's path in the repository without its extension.
// Called with s.mu held.
func (s *repo) publishPack(dir, tmp string, sum, idx []byte) (rel string, err error) {
	name := "pack-" + hex.EncodeToString(sum)
	// The index is written in full, under a temporary name, before either
	// file takes its name: a disk that fills (or a file size limit) while
	// it is written leaves nothing published, both temporary files going.
	// Nothing is removed once published: another writer of the same objects
	// at the same moment (two agents reading one unchanged document in one
	// second) publishes the same bytes under the same names, and removing
	// "our" pack could take its pack from under its index.
	idxTmp, err := s.writeTemp(dir, "tmp_idx_", idx)
	if err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	defer os.Remove(idxTmp) // gone once renamed; left by a failed rename
	if err := renameFile(tmp, filepath.Join(dir, name+".pack")); err != nil {
		return "", err
	}
	if err := renameFile(idxTmp, filepath.Join(dir, name+".idx")); err != nil {
		return "", fmt.Errorf("index: %w", err)
	}
	rel = "objects/pack/" + name
	s.pending = append(s.pending, rel+".pack", rel+".idx")
	s.st.Reindex()
	s.packsCheckedAt = s.packsCheckedAt.Add(-packCheckEvery)
	return rel, nil
}

// smallPacksOn reports whether a flush of a few objects makes a small
// pack: only where automatic maintenance packs them (gc.auto and
// gc.autoPackLimit not 0). Where it is off, a write leaves its objects
// loose, as git does, instead of leaving packs that no one rolls up and
// that every reader must map. Called with s.mu held.
func (s *repo) smallPacksOn() bool {
	return s.autoPack > 0 && s.autoPackLimit > 0 && !s.looseOnly
}

// writeSmallPack publishes the buffered objects, all held in memory and
// fewer than packThreshold, as one pack and its index: built in memory
// (entries compressed as the spill file compresses them, no deltas),
// written to a tmp_pack_* file renamed into place, then the index beside
// it. A pack of a dozen objects is two new files where loose objects
// would be a dozen, and so a dozen inodes that maintenance would delete
// again: on ext4 without a journal every file created scans past the
// inodes freed in the last half minute (recently_deleted), which made a
// write into a maintained store take twice the time of one into a store
// never maintained (docs/scaling.md, session 18). Maintenance packs small
// packs as it packs loose objects (packLoose). The files are synced as a
// write's few loose objects are, with its lock files (flushForUpdate).
// Called with s.mu held.
func (s *repo) writeSmallPack() error {
	n := len(s.bufOrder)
	var pack bytes.Buffer
	size := packHdrLen + 20
	for _, h := range s.bufOrder {
		size += 16 + len(s.buf[h].data)
	}
	pack.Grow(size)
	hdr := packFileHeader(n)
	pack.Write(hdr[:])
	entries := make([]indexEntry, 0, n)
	var zw *zlib.Writer
	for _, h := range s.bufOrder {
		b := s.buf[h]
		off := pack.Len()
		pack.Write(packHeader(b.t, len(b.data)))
		if len(b.data) < storeBelow {
			appendStoredZlib(&pack, b.data)
		} else {
			if zw == nil {
				zw, _ = zlib.NewWriterLevel(&pack, zlib.BestSpeed) // a valid level
			} else {
				zw.Reset(&pack)
			}
			zw.Write(b.data) // a bytes.Buffer's writes do not fail
			zw.Close()
		}
		entries = append(entries, indexEntry{h: h, off: uint64(off), crc: crc32.ChecksumIEEE(pack.Bytes()[off:])})
	}
	sum := sha1.Sum(pack.Bytes())
	pack.Write(sum[:])
	dir := filepath.Join(s.path, "objects", "pack")
	tmp, err := s.createTemp(dir, "tmp_pack_")
	if err != nil {
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	defer os.Remove(tmp.Name()) // a no-op once renamed
	if _, err := tmpWriter(tmp).Write(pack.Bytes()); err != nil {
		tmp.Close()
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	if err := closeTemp(tmp, s.perm.object(), false); err != nil {
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	rel, err := s.publishPack(dir, tmp.Name(), sum[:], encodeIndex(entries, sum[:]))
	if err != nil {
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	s.smallPacks = append(s.smallPacks, rel+".pack", rel+".idx")
	s.wroteSmall = true
	return nil
}

// indexEntry is one object of a pack being indexed (encodeIndex).
type indexEntry struct {
	h   plumbing.Hash
	off uint64
	crc uint32
}

// encodeIndex encodes a version 2 pack index of entries (sorted here).
func encodeIndex(entries []indexEntry, packSum []byte) []byte {
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].h[:], entries[j].h[:]) < 0 })
	return encodeSortedIndex(len(entries), func(i int) indexEntry { return entries[i] }, packSum)
}

// encodeSortedIndex encodes a version 2 pack index of the n entries entry
// returns, in increasing order of id.
func encodeSortedIndex(n int, entry func(int) indexEntry, packSum []byte) []byte {
	var idx bytes.Buffer
	large := 0
	for i := 0; i < n; i++ {
		if entry(i).off >= 1<<31 {
			large++
		}
	}
	// header, fan-out, ids, CRCs, offsets, large offsets, two checksums:
	// one buffer of the final size instead of doubling one
	idx.Grow(8 + 256*4 + n*(20+4+4) + large*8 + 2*20)
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for i := 0; i < n; i++ {
		fan[entry(i).h[0]]++
	}
	var total uint32
	var b [8]byte
	for _, v := range fan {
		total += v
		binary.BigEndian.PutUint32(b[:4], total)
		idx.Write(b[:4])
	}
	for i := 0; i < n; i++ {
		h := entry(i).h
		idx.Write(h[:])
	}
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint32(b[:4], entry(i).crc)
		idx.Write(b[:4])
	}
	nlarge := 0
	for i := 0; i < n; i++ {
		e := entry(i)
		v := uint32(e.off)
		if e.off >= 1<<31 {
			v = 1<<31 | uint32(nlarge)
			nlarge++
		}
		binary.BigEndian.PutUint32(b[:4], v)
		idx.Write(b[:4])
	}
	for i := 0; i < n; i++ {
		if e := entry(i); e.off >= 1<<31 {
			binary.BigEndian.PutUint64(b[:], e.off)
			idx.Write(b[:])
		}
	}
	idx.Write(packSum)
	s := sha1.Sum(idx.Bytes())
	idx.Write(s[:])
	return idx.Bytes()
}

// packedHas reports whether a pack holds h, by a binary search of the
// mapped pack indexes of the object reader (odb.findPacked), which
// refreshPacks and writePack make list the packs again when they changed.
// go-git's HasEncodedObject, which it replaces on the write path, resolved
// the loose path through its chroot helper (EvalSymlinks, several Lstats)
// for every object written. A pack it cannot read costs at most a
// duplicate object. Called with s.mu held.
func (s *repo) packedHas(h plumbing.Hash) bool {
	_, _, ok, err := s.st.findPacked(h)
	return ok && err == nil
}

// packHeader encodes an object's type and size as a pack entry header.
func packHeader(t plumbing.ObjectType, size int) []byte {
	b := []byte{byte(t)<<4 | byte(size&0x0f)}
	size >>= 4
	for size > 0 {
		b[len(b)-1] |= 0x80
		b = append(b, byte(size&0x7f))
		size >>= 7
	}
	return b
}

// writeFileAtomic writes data to a temp file beside path, with the object
// mode (synced first when synced is set), and renames it into place. The
// temp file never outlives a failure.
func (s *repo) writeFileAtomic(path string, data []byte, synced bool) error {
	tmp, err := s.createTemp(filepath.Dir(path), "tmp_idx_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := fillTemp(tmp, data, s.perm.object(), synced); err != nil {
		return err
	}
	return renameFile(tmp.Name(), path)
}

// writeTemp writes data to a new temporary file in dir named prefix and
// something, with the mode of an object file, and returns its path: the
// caller renames it or removes it. Nothing is left when it fails.
func (s *repo) writeTemp(dir, prefix string, data []byte) (string, error) {
	tmp, err := s.createTemp(dir, prefix)
	if err != nil {
		return "", err
	}
	if err := fillTemp(tmp, data, s.perm.object(), false); err != nil {
		os.Remove(tmp.Name())
		return "", err
	}
	return tmp.Name(), nil
}

// fillTemp writes data to the new temporary file tmp and closes it with
// mode (closeTemp).
func fillTemp(tmp *os.File, data []byte, mode os.FileMode, synced bool) error {
	if _, err := tmpWriter(tmp).Write(data); err != nil {
		tmp.Close()
		return err
	}
	return closeTemp(tmp, mode, synced)
}

var _ hash.Hash = sha1.New()
