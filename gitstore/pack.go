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
)

type bufObj struct {
	t    plumbing.ObjectType
	data []byte // nil once the object is in the spill file
	size int
	// in the spill file: where the entry header starts, the lengths of the
	// header and of the zlib stream after it, and the entry's CRC-32
	off        int64
	hlen, zlen int
	crc        uint32
}

// spillFile is the unnamed file spilled objects are written to, as pack
// entries without the pack header.
type spillFile struct {
	f   *os.File
	w   *bufio.Writer
	zw  *zlib.Writer // BestSpeed, for documents
	zs  *zlib.Writer // stored blocks, for small objects
	z   bytes.Buffer
	off int64
}

// storeBelow is the size under which a spilled object is stored in its zlib
// stream without compression: the records of a run (observations,
// definitions, trees, commits) are a few hundred bytes each, where building
// deflate's Huffman tables cost more CPU than the whole rest of the write
// and saved a few hundred bytes that the next gc recompresses anyway.
const storeBelow = 1024

// buffer adds an object to the write buffer. Called with s.mu held.
func (s *repo) buffer(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	if s.buf == nil {
		s.buf = map[plumbing.Hash]bufObj{}
	}
	if _, ok := s.buf[h]; ok {
		return nil
	}
	if s.spill != nil {
		b, err := s.spill.add(t, data)
		if err != nil {
			s.dropSpill(err)
			return diskError(fmt.Errorf("write pack: %w", err))
		}
		s.buf[h] = b
		s.bufOrder = append(s.bufOrder, h)
		return nil
	}
	cp := make([]byte, len(data))
	copy(cp, data)
	s.buf[h] = bufObj{t: t, data: cp, size: len(cp)}
	s.bufOrder = append(s.bufOrder, h)
	s.bufBytes += len(cp)
	if len(s.bufOrder) >= packThreshold || s.bufBytes > memLimit {
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
	zs, _ := zlib.NewWriterLevel(nil, zlib.NoCompression)
	sp := &spillFile{f: f, w: bufio.NewWriterSize(tmpWriter(f), 256<<10), zw: zw, zs: zs}
	moved := make(map[plumbing.Hash]bufObj, len(s.bufOrder))
	for _, h := range s.bufOrder {
		b := s.buf[h]
		if b.data == nil {
			continue
		}
		nb, err := sp.add(b.t, b.data)
		if err != nil {
			sp.close()
			return err
		}
		moved[h] = nb
	}
	for h, b := range moved {
		s.buf[h] = b
	}
	s.spill, s.bufBytes = sp, 0
	return nil
}

// add compresses one object into the spill file.
func (sp *spillFile) add(t plumbing.ObjectType, data []byte) (bufObj, error) {
	sp.z.Reset()
	zw := sp.zw
	if len(data) < storeBelow {
		zw = sp.zs
	}
	zw.Reset(&sp.z)
	zw.Write(data)
	if err := zw.Close(); err != nil {
		return bufObj{}, err
	}
	head := packHeader(t, len(data))
	crc := crc32.Update(crc32.ChecksumIEEE(head), crc32.IEEETable, sp.z.Bytes())
	b := bufObj{t: t, size: len(data), off: sp.off, hlen: len(head), zlen: sp.z.Len(), crc: crc}
	sp.w.Write(head)
	if _, err := sp.w.Write(sp.z.Bytes()); err != nil {
		return bufObj{}, err
	}
	sp.off += int64(len(head) + sp.z.Len())
	return b, nil
}

// read inflates a spilled object.
func (sp *spillFile) read(b bufObj) ([]byte, error) {
	if err := sp.w.Flush(); err != nil {
		return nil, err
	}
	zr, err := zlib.NewReader(io.NewSectionReader(sp.f, b.off+int64(b.hlen), int64(b.zlen)))
	if err != nil {
		return nil, err
	}
	defer zr.Close()
	data := make([]byte, b.size)
	if _, err := io.ReadFull(zr, data); err != nil {
		return nil, err
	}
	return data, nil
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
	kept := s.bufOrder[:0]
	for _, h := range s.bufOrder {
		if s.buf[h].data == nil {
			delete(s.buf, h)
		} else {
			kept = append(kept, h)
		}
	}
	s.bufOrder = kept
	s.spillErr = err
}

// buffered returns an object still in the write buffer. Called with s.mu
// held.
func (s *repo) buffered(h plumbing.Hash) (plumbing.EncodedObject, []byte, bool) {
	b, ok := s.buf[h]
	if !ok {
		return nil, nil, false
	}
	data := b.data
	if data == nil {
		var err error
		if data, err = s.spill.read(b); err != nil {
			return nil, nil, false
		}
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(b.t)
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
	if len(s.bufOrder) == 0 {
		return nil
	}
	var err error
	if s.spill == nil && len(s.bufOrder) >= packThreshold {
		err = s.startSpill()
	}
	if err == nil && s.spill != nil {
		err = s.writePack()
	} else if err == nil {
		for _, h := range s.bufOrder {
			b := s.buf[h]
			if err = s.writeLoose(h, b.t, b.data); err != nil {
				break
			}
		}
	}
	if err != nil {
		return err
	}
	s.buf, s.bufOrder, s.bufBytes = nil, nil, 0
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
	type entry struct {
		h      plumbing.Hash
		offset uint64
		crc    uint32
	}
	entries := make([]entry, 0, len(s.bufOrder))
	for _, h := range s.bufOrder {
		b := s.buf[h]
		if b.data != nil {
			tmp.Close()
			return fmt.Errorf("object %s was not spilled", h)
		}
		entries = append(entries, entry{h: h, offset: uint64(12 + b.off), crc: b.crc})
	}
	sum := sha1.New()
	mw := io.MultiWriter(tmpWriter(tmp), sum)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(entries)))
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

	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].h[:], entries[j].h[:]) < 0 })
	var idx bytes.Buffer
	isum := sha1.New()
	iw := io.MultiWriter(&idx, isum)
	iw.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range entries {
		fan[e.h[0]]++
	}
	var total uint32
	for i := range fan {
		total += fan[i]
		fan[i] = total
	}
	putU32 := func(w io.Writer, v uint32) {
		var b [4]byte
		binary.BigEndian.PutUint32(b[:], v)
		w.Write(b[:])
	}
	for _, v := range fan {
		putU32(iw, v)
	}
	for _, e := range entries {
		iw.Write(e.h[:])
	}
	for _, e := range entries {
		putU32(iw, e.crc)
	}
	var large []uint64
	for _, e := range entries {
		if e.offset < 1<<31 {
			putU32(iw, uint32(e.offset))
		} else {
			putU32(iw, 1<<31|uint32(len(large)))
			large = append(large, e.offset)
		}
	}
	for _, v := range large {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], v)
		iw.Write(b[:])
	}
	iw.Write(packSum)
	idx.Write(isum.Sum(nil))

	name := "pack-" + hex.EncodeToString(packSum)
	packPath := filepath.Join(dir, name+".pack")
	idxPath := filepath.Join(dir, name+".idx")
	if err := os.Rename(tmp.Name(), packPath); err != nil {
		return err
	}
	if err := s.writeFileAtomic(idxPath, idx.Bytes()); err != nil {
		return fmt.Errorf("index: %w", err)
	}
	s.pending = append(s.pending, "objects/pack/"+name+".pack", "objects/pack/"+name+".idx")
	s.st.Reindex()
	s.packsCheckedAt = s.packsCheckedAt.Add(-packCheckEvery)
	return nil
}

// packedHas reports whether a pack holds h, by a binary search of the
// direct reader's indexes (directread.go), reloaded when refreshPacks saw
// the pack list change. go-git's HasEncodedObject, which it replaces on
// the write path, resolved the loose path through its chroot helper
// (EvalSymlinks, several Lstats) for every object written. A pack it cannot
// read costs at most a duplicate object. Called with s.mu held.
func (s *repo) packedHas(h plumbing.Hash) bool {
	if s.direct == nil || s.direct.listing != s.packsSeen {
		s.loadDirectPacks()
	}
	for _, p := range s.direct.packs {
		if _, ok := p.idx.offset(h); ok {
			return true
		}
	}
	return false
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
// mode, and renames it into place. The temp file never outlives a failure.
func (s *repo) writeFileAtomic(path string, data []byte) error {
	tmp, err := s.createTemp(filepath.Dir(path), "tmp_idx_")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmpWriter(tmp).Write(data); err != nil {
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
	return os.Rename(tmp.Name(), path)
}

var _ hash.Hash = sha1.New()
