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

// Objects written through a Store are held in memory until the next Sync or
// Update, then written in one go: as loose objects when there are few, as
// one pack (and its index) when there are at least packThreshold of them,
// so a run that records a thousand documents creates two files instead of
// several thousand. Reads see buffered objects at once; other processes see
// them once they are flushed, which always happens before any ref can name
// them.
const (
	packThreshold = 64
	bufferLimit   = 64 << 20 // flush early past this many buffered bytes
)

type bufObj struct {
	t    plumbing.ObjectType
	data []byte
}

// buffer adds an object to the write buffer. Called with s.mu held.
func (s *repo) buffer(h plumbing.Hash, t plumbing.ObjectType, data []byte) error {
	if s.buf == nil {
		s.buf = map[plumbing.Hash]bufObj{}
	}
	if _, ok := s.buf[h]; ok {
		return nil
	}
	cp := make([]byte, len(data))
	copy(cp, data)
	s.buf[h] = bufObj{t: t, data: cp}
	s.bufOrder = append(s.bufOrder, h)
	s.bufBytes += len(cp)
	if s.bufBytes > bufferLimit {
		return s.flush()
	}
	return nil
}

// buffered returns an object still in the write buffer. Called with s.mu
// held.
func (s *repo) buffered(h plumbing.Hash) (plumbing.EncodedObject, []byte, bool) {
	b, ok := s.buf[h]
	if !ok {
		return nil, nil, false
	}
	mo := &plumbing.MemoryObject{}
	mo.SetType(b.t)
	mo.SetSize(int64(len(b.data)))
	mo.Write(b.data)
	return mo, b.data, true
}

// flush writes the buffered objects, adding the files written to
// s.pending for the next sync. Called with s.mu held.
func (s *repo) flush() error {
	if len(s.bufOrder) == 0 {
		return nil
	}
	var err error
	if len(s.bufOrder) >= packThreshold {
		err = s.writePack()
	} else {
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
	s.sweepStale()
	return nil
}

// writePack writes the buffered objects as one pack and its version 2
// index, renaming the pack into place before the index (git ignores a pack
// without an index). Called with s.mu held.
func (s *repo) writePack() error {
	dir := filepath.Join(s.path, "objects", "pack")
	tmp, err := s.createTemp(dir, "tmp_pack_")
	if err != nil {
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	defer os.Remove(tmp.Name())
	type entry struct {
		h      plumbing.Hash
		offset uint64
		crc    uint32
	}
	entries := make([]entry, 0, len(s.bufOrder))
	sum := sha1.New()
	bw := bufio.NewWriterSize(io.MultiWriter(tmpWriter(tmp), sum), 1<<20)
	var off uint64
	write := func(p []byte) {
		bw.Write(p)
		off += uint64(len(p))
	}
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(s.bufOrder)))
	write(hdr[:])
	var z bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&z, zlib.BestSpeed)
	for _, h := range s.bufOrder {
		b := s.buf[h]
		z.Reset()
		zw.Reset(&z)
		zw.Write(b.data)
		if err := zw.Close(); err != nil {
			tmp.Close()
			return fmt.Errorf("write pack: %w", err)
		}
		head := packHeader(b.t, len(b.data))
		crc := crc32.Update(crc32.ChecksumIEEE(head), crc32.IEEETable, z.Bytes())
		entries = append(entries, entry{h: h, offset: off, crc: crc})
		write(head)
		write(z.Bytes())
	}
	if err := bw.Flush(); err != nil {
		tmp.Close()
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	packSum := sum.Sum(nil)
	if _, err := tmpWriter(tmp).Write(packSum); err != nil {
		tmp.Close()
		return diskError(fmt.Errorf("write pack: %w", err))
	}
	if err := tmp.Chmod(s.perm.object()); err != nil {
		tmp.Close()
		return fmt.Errorf("write pack: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return diskError(fmt.Errorf("write pack: %w", err))
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
		return fmt.Errorf("write pack: %w", err)
	}
	if err := s.writeFileAtomic(idxPath, idx.Bytes()); err != nil {
		return diskError(fmt.Errorf("write pack index: %w", err))
	}
	s.pending = append(s.pending, "objects/pack/"+name+".pack", "objects/pack/"+name+".idx")
	s.st.Reindex()
	s.packsCheckedAt = s.packsCheckedAt.Add(-packCheckEvery)
	return nil
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
