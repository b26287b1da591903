package gitstore

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// The direct reader: an object is read from its loose file or, when it is
// stored whole in a pack, from the pack at the offset a binary search of the
// pack's .idx file gives, inflated once into a buffer of its declared size.
// go-git's path decodes every .idx into maps when a pack is first used,
// copies each object through a growing buffer and hashes it with its
// collision-detecting SHA-1 to key a cache, before readObject copies it again
// and checks its id: for `replay` of 1,000 documents that was most of the
// time. Deltified objects, and anything the direct reader does not find or
// cannot read, go the go-git way, so a surprise costs time, never a wrong
// answer: what it returns has been checked against the id it was asked for.

// directPacks is the set of packs the direct reader knows, loaded on first
// use and again when a miss finds the pack directory changed. Guarded by
// repo.mu.
type directPacks struct {
	listing string // packListing when loaded
	packs   []*directPack
	inf     inflater
}

// inflater keeps one zlib reader and one buffered reader for every object
// read: a new flate decompressor per 4 KiB document was a fifth of replay.
type inflater struct {
	br *bufio.Reader
	z  io.ReadCloser
}

// inflate reads exactly size bytes of zlib data from r.
func (f *inflater) inflate(r io.Reader, size uint64) ([]byte, bool) {
	if f.br == nil {
		f.br = bufio.NewReaderSize(r, 32<<10)
	} else {
		f.br.Reset(r)
	}
	if f.z == nil {
		z, err := zlib.NewReader(f.br)
		if err != nil {
			return nil, false
		}
		f.z = z
	} else if err := f.z.(zlib.Resetter).Reset(f.br, nil); err != nil {
		return nil, false
	}
	data, ok := readSized(f.z, size)
	if !ok || !atEOF(f.z) {
		return nil, false // longer than declared: go-git says so
	}
	return data, true
}

type directPack struct {
	idx  packIndex
	pack *os.File
}

// packIndex is a version 2 pack index (git's pack-format.txt).
type packIndex struct {
	b []byte
	n int
}

var errPackIndex = errors.New("not a version 2 pack index")

// parsePackIndex checks the layout of a version 2 .idx file: the header,
// a fan-out table that never decreases, and room for every table it
// announces.
func parsePackIndex(b []byte) (packIndex, error) {
	if len(b) < 8+256*4+40 || !bytes.Equal(b[:8], []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2}) {
		return packIndex{}, errPackIndex
	}
	prev := uint32(0)
	for i := 0; i < 256; i++ {
		v := binary.BigEndian.Uint32(b[8+4*i:])
		if v < prev {
			return packIndex{}, errPackIndex
		}
		prev = v
	}
	n := int(prev)
	if n > (len(b)-8-256*4-40)/28 {
		return packIndex{}, errPackIndex
	}
	return packIndex{b: b, n: n}, nil
}

// offset returns the pack offset of h, or false when the index does not
// hold it (or names a 64-bit offset it does not have).
func (x packIndex) offset(h plumbing.Hash) (int64, bool) {
	const fan = 8
	names := fan + 256*4
	lo := 0
	if h[0] > 0 {
		lo = int(binary.BigEndian.Uint32(x.b[fan+4*(int(h[0])-1):]))
	}
	hi := int(binary.BigEndian.Uint32(x.b[fan+4*int(h[0]):]))
	if lo > hi || hi > x.n {
		return 0, false
	}
	i := lo + sort.Search(hi-lo, func(j int) bool {
		return bytes.Compare(x.b[names+20*(lo+j):names+20*(lo+j)+20], h[:]) >= 0
	})
	if i >= hi || !bytes.Equal(x.b[names+20*i:names+20*i+20], h[:]) {
		return 0, false
	}
	offs := names + 24*x.n // after the names and the CRCs
	o := binary.BigEndian.Uint32(x.b[offs+4*i:])
	if o&0x80000000 == 0 {
		return int64(o), true
	}
	big := offs + 4*x.n + 8*int(o&0x7fffffff)
	if big+8 > len(x.b)-40 {
		return 0, false
	}
	v := binary.BigEndian.Uint64(x.b[big:])
	if v > 1<<62 {
		return 0, false
	}
	return int64(v), true
}

// directRead reads object h without go-git; ok is false when it cannot
// (then readObject takes the go-git path). Called with s.mu held.
func (s *repo) directRead(h plumbing.Hash) (t plumbing.ObjectType, data []byte, ok bool) {
	if s.direct == nil {
		s.loadDirectPacks()
	}
	// packs first, as git looks: most objects of a store that was ever
	// packed are there, and a loose lookup is a system call
	t, data, ok, indexed := s.directPacked(h)
	if ok || indexed {
		return t, data, ok // a delta, or damaged: go-git's turn
	}
	if t, data, ok = s.direct.inf.readLoose(s.path, h); ok {
		return t, data, true
	}
	if now := s.packListing(); now != s.direct.listing {
		s.loadDirectPacks()
		t, data, ok, _ = s.directPacked(h)
	}
	return t, data, ok
}

// directPacked reads h from the packs it knows; indexed is true when an
// index holds h, whether or not it could be read.
func (s *repo) directPacked(h plumbing.Hash) (t plumbing.ObjectType, data []byte, ok, indexed bool) {
	for _, p := range s.direct.packs {
		off, found := p.idx.offset(h)
		if !found {
			continue
		}
		t, data, ok := s.direct.inf.readPacked(p.pack, off)
		if !ok || objectHash(t, data) != h {
			return 0, nil, false, true
		}
		return t, data, true, true
	}
	return 0, nil, false, false
}

// loadDirectPacks (re)reads the pack directory's indexes.
func (s *repo) loadDirectPacks() {
	s.closeDirect()
	d := &directPacks{listing: s.packListing()}
	dir := filepath.Join(s.path, "objects", "pack")
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		base, isIdx := strings.CutSuffix(e.Name(), ".idx")
		if !isIdx || !strings.HasPrefix(base, "pack-") {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		idx, err := parsePackIndex(b)
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join(dir, base+".pack"))
		if err != nil {
			continue
		}
		d.packs = append(d.packs, &directPack{idx: idx, pack: f})
	}
	s.direct = d
}

// closeDirect closes the pack files the direct reader holds.
func (s *repo) closeDirect() {
	if s.direct == nil {
		return
	}
	for _, p := range s.direct.packs {
		p.pack.Close()
	}
	s.direct = nil
}

// readPacked reads the undeltified object at off of pack f.
func readPacked(f io.ReaderAt, off int64) (plumbing.ObjectType, []byte, bool) {
	var inf inflater
	return inf.readPacked(f, off)
}

func (inf *inflater) readPacked(f io.ReaderAt, off int64) (plumbing.ObjectType, []byte, bool) {
	if off < 0 {
		return 0, nil, false
	}
	var hdr [16]byte
	n, _ := f.ReadAt(hdr[:], off)
	if n == 0 {
		return 0, nil, false
	}
	c := hdr[0]
	t := plumbing.ObjectType((c >> 4) & 7)
	size := uint64(c & 15)
	shift := uint(4)
	i := 1
	for c&0x80 != 0 {
		if i >= n || shift > 56 {
			return 0, nil, false
		}
		c = hdr[i]
		i++
		size |= uint64(c&0x7f) << shift
		shift += 7
	}
	switch t {
	case plumbing.CommitObject, plumbing.TreeObject, plumbing.BlobObject, plumbing.TagObject:
	default:
		return 0, nil, false // a delta: go-git resolves it
	}
	data, ok := inf.inflate(io.NewSectionReader(f, off+int64(i), 1<<62), size)
	return t, data, ok
}

// maxDirectObject bounds the objects the direct reader reads; bigger ones
// go the go-git way.
const maxDirectObject = 1 << 30

// readSized reads exactly size bytes from r. The buffer is allocated whole
// only up to 1 MiB: a damaged header declaring more allocates no more than
// the data that is really there.
func readSized(r io.Reader, size uint64) ([]byte, bool) {
	if size > maxDirectObject {
		return nil, false
	}
	if size <= 1<<20 {
		data := make([]byte, size)
		_, err := io.ReadFull(r, data)
		return data, err == nil
	}
	var buf bytes.Buffer
	n, err := io.CopyN(&buf, r, int64(size))
	return buf.Bytes(), err == nil && uint64(n) == size
}

// atEOF reports whether r has nothing more to read.
func atEOF(r io.Reader) bool {
	var one [1]byte
	n, err := r.Read(one[:])
	for n == 0 && err == nil {
		n, err = r.Read(one[:])
	}
	return n == 0 && err == io.EOF
}

// readLoose reads a loose object: "TYPE SIZE\x00" and the content,
// deflated.
func (inf *inflater) readLoose(gitDir string, h plumbing.Hash) (plumbing.ObjectType, []byte, bool) {
	f, err := os.Open(filepath.Join(gitDir, filepath.FromSlash(looseRel(h))))
	if err != nil {
		return 0, nil, false
	}
	defer f.Close()
	if inf.br == nil {
		inf.br = bufio.NewReaderSize(f, 32<<10)
	} else {
		inf.br.Reset(f)
	}
	if inf.z == nil {
		if inf.z, err = zlib.NewReader(inf.br); err != nil {
			inf.z = nil
			return 0, nil, false
		}
	} else if err := inf.z.(zlib.Resetter).Reset(inf.br, nil); err != nil {
		return 0, nil, false
	}
	var head [32]byte
	n := 0
	for {
		if n == len(head) {
			return 0, nil, false
		}
		if _, err := io.ReadFull(inf.z, head[n:n+1]); err != nil {
			return 0, nil, false
		}
		if head[n] == 0 {
			break
		}
		n++
	}
	name, sz, found := strings.Cut(string(head[:n]), " ")
	if !found {
		return 0, nil, false
	}
	t, err := plumbing.ParseObjectType(name)
	if err != nil || t == plumbing.OFSDeltaObject || t == plumbing.REFDeltaObject {
		return 0, nil, false
	}
	size, err := strconv.ParseUint(sz, 10, 64)
	if err != nil {
		return 0, nil, false
	}
	data, ok := readSized(inf.z, size)
	if !ok || !atEOF(inf.z) {
		return 0, nil, false
	}
	if objectHash(t, data) != h {
		return 0, nil, false
	}
	return t, data, true
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
