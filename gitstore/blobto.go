package gitstore

// Streaming a blob out of the store (BlobTo): a loose object or a pack
// entry is inflated a piece at a time into the caller's writer, and a
// delta is applied instruction by instruction against its base, so a
// caller that hashes a snapshot of gigabytes (a pull checking what a
// remote sent) holds a few buffers of it, never all of it.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"crypto/sha1"
	"errors"
	"fmt"
	"hash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/readproof/readproof/internal/hint"
)

// streamChunk is the piece BlobTo inflates and writes at a time.
const streamChunk = 64 << 10

// streamFrom is the size from which BlobTo streams an object; a smaller
// one is read whole as Blob reads it (decoded in place, through the base
// cache) and written at once: streaming a blob of a few KiB cost its
// buffers and inflater, four times the time of the read
// (BenchmarkSnapshotHash).
const streamFrom = 1 << 20

// looseWholeMax is the largest loose object file BlobTo reads whole, to
// learn the object's size and read a small one in place.
const looseWholeMax = 256 << 10

// streamBaseInMemory is the largest delta base BlobTo holds whole while it
// applies a delta to it (read as Blob reads it, through the base cache).
// A larger base is first streamed into a temporary file, removed at once,
// and the delta's copies are read from there: memory stays bounded
// whatever the sizes along a delta chain, at the cost of the disk the
// bases take for the time of the read.
const streamBaseInMemory = 16 << 20

// BlobTo writes blob id's content to w as it is inflated (see
// gitobj.Reader). Loose objects and pack entries are inflated
// streamChunk bytes at a time; a delta is applied as its instructions
// are read, against a base held whole up to streamBaseInMemory bytes and
// spilled to a temporary file in objects/pack beyond. The content's SHA-1
// is computed on the way and compared with id at the end.
func (s *repo) BlobTo(id OID, max int64, w io.Writer) (int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return 0, errClosed
	}
	h, err := parseOID(id)
	if err != nil {
		return 0, err
	}
	if o, data, ok := s.buffered(h); ok {
		return writeWhole(id, o.Type(), data, max, w)
	}
	if s.copied != nil {
		if err := s.copied.failed(); err != nil {
			return 0, fmt.Errorf("read object %s: the copy of this repository failed: %w", id, err)
		}
		if k, ok := s.copied.get(h); ok {
			return writeWhole(id, k.t, k.data, max, w) // hashed to h by the copy's index
		}
	}
	sw := &streamWriter{id: id, max: max, w: w}
	sp := &spill{dir: filepath.Join(s.path, "objects", "pack"), whole: streamFrom, inMemory: streamBaseInMemory}
	if s.wholeUpTo != 0 {
		sp.whole = s.wholeUpTo
	}
	if s.baseUpTo != 0 {
		sp.inMemory = s.baseUpTo
	}
	read := func() error { return s.st.streamObject(h, 0, sp, sw) }
	err = read()
	defer func() { s.basesSpilled += sp.spilled }()
	if err != nil && sw.refusal == nil && !sw.started {
		// git gc may have packed the object, or replaced the pack we knew
		// (as readObjectUnchecked retries; nothing was written yet).
		err = s.afterMiss(read)
	}
	switch {
	case err == nil:
	case sw.werr != nil:
		return sw.n, sw.werr
	case sw.refusal != nil:
		return 0, sw.refusal
	case sp.werr != nil:
		return sw.n, hint.With(fmt.Errorf("read object %s: write a delta base to a temporary file: %w", id, sp.werr), spillHint(sp.werr, sp.dir))
	case errors.Is(err, plumbing.ErrObjectNotFound):
		return sw.n, s.missingObject(id)
	case errors.Is(err, fs.ErrPermission):
		return sw.n, fmt.Errorf("read object %s: %w", id, err)
	default:
		return sw.n, objectReadError(id, err)
	}
	var sum plumbing.Hash
	copy(sum[:], sw.sha.Sum(nil))
	if sum != h {
		return sw.n, errContentMismatch(id)
	}
	return sw.n, nil
}

// spillHint is the hint of a delta base BlobTo could not write to a
// temporary file (err), in dir or in the directory err names.
func spillHint(err error, dir string) string {
	var pe *fs.PathError
	if errors.As(err, &pe) && filepath.IsAbs(pe.Path) {
		dir = filepath.Dir(pe.Path)
	}
	remedy := WriteLimitRemedy(err, dir)
	if remedy == "" {
		remedy = "make " + dir + " writable, or set TMPDIR to a directory that is"
	}
	return "the blob is a delta on a base too large to hold in memory, written to a temporary file while the blob is read: " + remedy + "; then run the command again"
}

// writeWhole is BlobTo of an object already in memory (buffered, or
// hashed by a copy's index): nothing to check against its id.
func writeWhole(id OID, t plumbing.ObjectType, data []byte, max int64, w io.Writer) (int64, error) {
	if t != plumbing.BlobObject {
		return 0, fmt.Errorf("blob %s: object is a %s: %w", id, t, ErrNotFound)
	}
	if max >= 0 && int64(len(data)) > max {
		return 0, tooLarge(id, int64(len(data)), max)
	}
	n, err := w.Write(data)
	return int64(n), err
}

// objectSink receives a streamed object: begin, with its type and size,
// before any of its content, which it may refuse; then the content.
type objectSink interface {
	begin(t plumbing.ObjectType, size int64) error
	io.Writer
}

// sinkWhole writes to sink an object read whole.
func sinkWhole(sink objectSink, t plumbing.ObjectType, data []byte) error {
	if err := sink.begin(t, int64(len(data))); err != nil {
		return err
	}
	_, err := sink.Write(data)
	return err
}

// streamWriter is BlobTo's sink: it refuses what is not a blob or is over
// max, hashes the object as git names it, and passes the content to w.
type streamWriter struct {
	id      OID
	max     int64
	w       io.Writer
	started bool
	refusal error // begin's
	werr    error // w's
	sha     hash.Hash
	n       int64
}

func (sw *streamWriter) begin(t plumbing.ObjectType, size int64) error {
	if t != plumbing.BlobObject {
		sw.refusal = fmt.Errorf("blob %s: object is a %s: %w", sw.id, t, ErrNotFound)
		return sw.refusal
	}
	if sw.max >= 0 && size > sw.max {
		sw.refusal = tooLarge(sw.id, size, sw.max)
		return sw.refusal
	}
	sw.started = true
	sw.sha = sha1.New()
	var head [32]byte
	sw.sha.Write(appendObjectHeader(head[:0], t, int(size)))
	return nil
}

func (sw *streamWriter) Write(p []byte) (int, error) {
	sw.sha.Write(p)
	n, err := sw.w.Write(p)
	sw.n += int64(n)
	if err == nil && n < len(p) {
		err = io.ErrShortWrite
	}
	if err != nil {
		sw.werr = err
	}
	return n, err
}

// spill holds what one BlobTo shares across a delta chain: its copy
// buffer, and where large delta bases go.
type spill struct {
	dir      string // the store's objects/pack
	buf      []byte // streamChunk bytes, made on first use (buffer)
	whole    int64  // the largest object read whole (streamFrom)
	inMemory int64  // the largest base held whole (streamBaseInMemory)
	werr     error  // a write to a temporary file that failed
	spilled  int    // bases written to a temporary file (tests count them)
}

// deltaBase is a delta's base: its bytes (data) or a temporary file
// holding them (f).
type deltaBase struct {
	t    plumbing.ObjectType
	size int64
	data []byte
	f    *os.File
}

func (sp *spill) buffer() []byte {
	if sp.buf == nil {
		sp.buf = make([]byte, streamChunk)
	}
	return sp.buf
}

func (b *deltaBase) close() {
	if b.f != nil {
		b.f.Close()
		os.Remove(b.f.Name()) // where the removal at creation failed
	}
}

// spillTo writes an object, through write, into a temporary file and
// returns it as a delta base. The file and its buffer are made when the
// object begins (fileSink.begin), which for a delta is once its own base
// is read: following a chain of deltas each over inMemory (or a delta a
// hostile pack makes its own base, until maxDeltaChain) holds no file and
// no buffer per link, only those of the link being applied and its base.
func (sp *spill) spillTo(write func(objectSink) error) (*deltaBase, error) {
	fsink := &fileSink{sp: sp}
	done := false
	defer func() {
		if !done {
			fsink.discard() // an error, or a panic on its way up
		}
	}()
	if err := write(fsink); err != nil {
		return nil, err
	}
	if err := fsink.finish(); err != nil {
		return nil, err
	}
	done = true
	return &deltaBase{t: fsink.t, size: fsink.n, f: fsink.f}, nil
}

// fileSink writes an object into a temporary file, made on its begin.
type fileSink struct {
	sp *spill
	f  *os.File
	bw *bufio.Writer
	t  plumbing.ObjectType
	n  int64
}

func (s *fileSink) begin(t plumbing.ObjectType, _ int64) error {
	s.t = t
	return s.open()
}

// open makes the file: in objects/pack, else (a store read where it
// cannot be written: read-only media) in TMPDIR, removed at once so that
// nothing is left behind where the system allows.
func (s *fileSink) open() error {
	if s.f != nil {
		return nil
	}
	f, err := os.CreateTemp(s.sp.dir, "tmp_pack_base_")
	if err != nil {
		if f, err = os.CreateTemp("", "readproof-base-"); err != nil {
			s.sp.werr = err
			return err
		}
	}
	os.Remove(f.Name())
	s.sp.spilled++
	s.f, s.bw = f, bufio.NewWriterSize(tmpWriter(f), streamChunk)
	return nil
}

func (s *fileSink) Write(p []byte) (int, error) {
	if err := s.open(); err != nil {
		return 0, err
	}
	n, err := s.bw.Write(p)
	s.n += int64(n)
	if err != nil {
		s.sp.werr = err
	}
	return n, err
}

// finish flushes what the buffer holds into the file.
func (s *fileSink) finish() error {
	if err := s.open(); err != nil {
		return err
	}
	if err := s.bw.Flush(); err != nil {
		s.sp.werr = err
		return err
	}
	return nil
}

// discard closes and removes the file, if it was made.
func (s *fileSink) discard() {
	if s.f != nil {
		(&deltaBase{f: s.f}).close()
	}
}

// streamObject writes object h to sink: packed, loose, then from an
// alternate. A miss is plumbing.ErrObjectNotFound, before sink saw
// anything. depth counts the deltas above this read.
func (d *odb) streamObject(h plumbing.Hash, depth int, sp *spill, sink objectSink) error {
	if depth > maxDeltaChain {
		return fmt.Errorf("object %s: %w: delta chain longer than %d", h, errPackCorrupt, maxDeltaChain)
	}
	p, off, ok, err := d.findPacked(h)
	if err != nil {
		return err
	}
	if ok {
		err := d.streamPacked(p, off, depth, sp, sink)
		if !errors.Is(err, errPackGone) {
			return err
		}
		// Removed by a gc since we listed it: look elsewhere.
	}
	err = d.streamLoose(filepath.Join(d.dir, h.String()[:2], h.String()[2:]), sp, sink)
	if err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
		return err
	}
	for _, a := range d.alternates() {
		err := a.streamObject(h, depth, sp, sink)
		if err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
			return err
		}
	}
	return plumbing.ErrObjectNotFound
}

// streamLoose writes the loose object at path to sink. A small file is
// read whole: a small object in it is then decoded in place, as Blob
// decodes it.
func (d *odb) streamLoose(path string, sp *spill, sink objectSink) error {
	f, err := openLoose(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return plumbing.ErrObjectNotFound
		}
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if !fi.Mode().IsRegular() {
		// a FIFO or a device: not the object's bytes (readLooseFile)
		return &fs.PathError{Op: "read", Path: path, Err: ErrObjectNotRegular}
	}
	if fi.Size() <= looseWholeMax && sp.whole >= 0 {
		raw := make([]byte, fi.Size())
		if _, err := io.ReadFull(f, raw); err != nil {
			return fmt.Errorf("loose object %s: %w", path, err)
		}
		if n, ok := d.fi.looseHeaderSize(raw); ok && n <= sp.whole && !d.zlibOnly {
			// small: decoded whole, in place, as Blob decodes it
			t, data, _, err := d.decodeLoose(path, raw, false)
			if err != nil {
				return err
			}
			return sinkWhole(sink, t, data)
		}
		if err := d.zr.reset(bytes.NewReader(raw)); err != nil {
			return fmt.Errorf("loose object %s: %w", path, err)
		}
		return sinkLoose(d.zr.r, path, sp, sink)
	}
	zr, err := zlib.NewReader(bufio.NewReaderSize(f, streamChunk))
	if err != nil {
		return fmt.Errorf("loose object %s: %w", path, err)
	}
	return sinkLoose(zr, path, sp, sink)
}

// sinkLoose writes to sink the loose object at path whose inflated stream
// is r: its header read, then exactly the content the header states.
func sinkLoose(r io.Reader, path string, sp *spill, sink objectSink) error {
	t, size, err := readLooseHeader(r, path)
	if err != nil {
		return err
	}
	if err := sink.begin(t, size); err != nil {
		return err
	}
	if err := copyExactly(sink, r, size, sp.buffer()); err != nil {
		return fmt.Errorf("loose object %s: %w", path, err)
	}
	return nil
}

// looseHeaderSize is the size the header of the loose object file raw
// states, decoded in place from the start of its stream (ok false: it
// could not be, and compress/zlib is to say why).
func (f *inflater) looseHeaderSize(raw []byte) (int64, bool) {
	if !zlibHeaderOK(raw) {
		return 0, false
	}
	var head [64]byte
	n, _, err := f.inflate(head[:], raw[2:], true)
	if err != nil {
		return 0, false
	}
	h, _, ok := bytes.Cut(head[:n], []byte{0})
	if !ok {
		return 0, false
	}
	_, size, ok := bytes.Cut(h, []byte(" "))
	sz, err := strconv.ParseInt(string(size), 10, 64)
	if !ok || err != nil || sz < 0 {
		return 0, false
	}
	return sz, true
}

// copyExactly copies exactly n bytes of r to w through buf and checks that
// no more follow, as readExactly reads them.
func copyExactly(w io.Writer, r io.Reader, n int64, buf []byte) error {
	got, err := io.CopyBuffer(struct{ io.Writer }{w}, io.LimitReader(r, n), buf)
	if err != nil || got != n {
		return shortContent(got, n, err)
	}
	var one [1]byte
	if m, _ := r.Read(one[:]); m != 0 {
		return fmt.Errorf("content is longer than the %d bytes its header says", n)
	}
	return nil
}

// zlibAt returns an inflater of pack entry e's compressed data.
func (p *packFile) zlibAt(e entry) (io.Reader, error) {
	var src io.Reader
	if p.mapped != nil {
		src = bytes.NewReader(p.mapped[e.data : p.packSize-20])
	} else {
		src = bufio.NewReaderSize(io.NewSectionReader(p.pack, e.data, p.packSize-20-e.data), streamChunk)
	}
	zr, err := zlib.NewReader(src)
	if err != nil {
		return nil, fmt.Errorf("%s.pack offset %d: %w: %w", p.name, e.data, errPackCorrupt, err)
	}
	return zr, nil
}

// streamPacked writes the object at off in p to sink: an entry's content
// as it inflates, a delta's result as its instructions are read.
func (d *odb) streamPacked(p *packFile, off int64, depth int, sp *spill, sink objectSink) error {
	if err := p.openPack(); err != nil {
		return err
	}
	if t, data, ok := d.cache.get(p, off); ok {
		return sinkWhole(sink, t, data)
	}
	e, err := p.entryAt(off)
	if err != nil {
		return err
	}
	return d.streamEntry(p, off, e, -1, depth, sp, sink)
}

// streamEntry is streamPacked of the entry e at off, its header already
// read (not in the cache), and for a delta its result size when the
// caller has read that too (size >= 0; -1: not read yet): each header
// along a chain is read once.
func (d *odb) streamEntry(p *packFile, off int64, e entry, size int64, depth int, sp *spill, sink objectSink) error {
	if e.t != plumbing.OFSDeltaObject && e.t != plumbing.REFDeltaObject {
		if err := sink.begin(e.t, e.size); err != nil {
			return err
		}
		if e.size <= sp.whole {
			data, err := p.inflate(e, &d.zr, &d.fi)
			if err != nil {
				return err
			}
			_, err = sink.Write(data)
			return err
		}
		zr, err := p.zlibAt(e)
		if err != nil {
			return err
		}
		if err := copyExactly(sink, zr, e.size, sp.buffer()); err != nil {
			return fmt.Errorf("%s.pack offset %d: %w: %w", p.name, e.data, errPackCorrupt, err)
		}
		return nil
	}
	if depth >= maxDeltaChain {
		return fmt.Errorf("%s.pack offset %d: %w: delta chain longer than %d", p.name, off, errPackCorrupt, maxDeltaChain)
	}
	// The result's size first, from the delta's header: a result over
	// the caller's bound is refused before its base is read.
	if size < 0 {
		var err error
		if size, err = d.entrySize(p, e); err != nil {
			return err
		}
	}
	if sw, ok := sink.(*streamWriter); ok && sw.max >= 0 && size > sw.max {
		sw.refusal = tooLarge(sw.id, size, sw.max)
		return sw.refusal
	}
	fits := size <= sp.whole
	if fits {
		// read whole only when every base below is small too: a small
		// result on a huge base would hold the base in memory
		var err error
		if fits, err = d.chainFits(p, e, size, sp.inMemory); err != nil {
			return err
		}
	}
	if fits {
		t, data, err := d.readPackedAt(p, off, 0)
		if err != nil {
			return err
		}
		return sinkWhole(sink, t, data)
	}
	base, err := d.streamBase(p, off, e, depth, sp)
	if err != nil {
		return err
	}
	defer base.close()
	if err := sink.begin(base.t, size); err != nil {
		return err
	}
	zr, err := p.zlibAt(e)
	if err != nil {
		return err
	}
	bad := func(err error) error {
		return fmt.Errorf("%s.pack offset %d: %w: %w", p.name, off, errPackCorrupt, err)
	}
	dr := &countedReader{r: zr, left: e.size}
	if err := streamDelta(sink, base, bufio.NewReaderSize(dr, streamChunk), size, sp.buffer()); err != nil {
		return bad(err)
	}
	if dr.left > 0 {
		return bad(shortContent(e.size-dr.left, e.size, nil))
	}
	var one [1]byte
	if m, _ := zr.Read(one[:]); m != 0 {
		return bad(fmt.Errorf("content is longer than the %d bytes its header says", e.size))
	}
	return nil
}

// streamBase returns the base of the delta e at off in p: whole in memory
// up to streamBaseInMemory bytes, else streamed into a temporary file.
func (d *odb) streamBase(p *packFile, off int64, e entry, depth int, sp *spill) (*deltaBase, error) {
	boff := e.baseOff
	if e.t == plumbing.REFDeltaObject {
		o, ok, err := p.find(e.baseID)
		if err != nil {
			return nil, err
		}
		if !ok {
			return d.baseByID(p, off, e.baseID, depth, sp)
		}
		boff = o
	}
	if t, data, ok := d.cache.get(p, boff); ok && int64(len(data)) <= sp.inMemory {
		return &deltaBase{t: t, size: int64(len(data)), data: data}, nil
	}
	be, err := p.entryAt(boff)
	if err != nil {
		return nil, err
	}
	n, err := d.entrySize(p, be)
	if err != nil {
		return nil, err
	}
	fits := n <= sp.inMemory
	if fits {
		if fits, err = d.chainFits(p, be, n, sp.inMemory); err != nil {
			return nil, err
		}
	}
	if fits {
		t, data, err := d.readPackedAt(p, boff, 0)
		if err != nil {
			return nil, err
		}
		return &deltaBase{t: t, size: int64(len(data)), data: data}, nil
	}
	return sp.spillTo(func(sink objectSink) error { return d.streamEntry(p, boff, be, n, depth+1, sp, sink) })
}

// chainFits reports whether the entry e in p and every base of its delta
// chain are at most limit bytes, each read from its header, so that
// reading the object whole holds no more than a few such objects. size is
// e's own size, which the caller has read with entrySize. A base in
// another pack or loose is not looked at: false, and the caller streams.
func (d *odb) chainFits(p *packFile, e entry, size, limit int64) (bool, error) {
	for i := range maxDeltaChain + 1 {
		if i > 0 {
			var err error
			if size, err = d.entrySize(p, e); err != nil {
				return false, err
			}
		}
		if e.t != plumbing.OFSDeltaObject && e.t != plumbing.REFDeltaObject {
			return e.size <= limit, nil
		}
		if size > limit || e.size > limit {
			return false, nil
		}
		off := e.baseOff
		if e.t == plumbing.REFDeltaObject {
			o, ok, err := p.find(e.baseID)
			if err != nil || !ok {
				return false, err
			}
			off = o
		}
		var err error
		if e, err = p.entryAt(off); err != nil {
			return false, err
		}
	}
	return false, nil // longer than any chain: the stream refuses it
}

// baseByID is streamBase for a REF_DELTA base that is not in the delta's
// pack: loose, in another pack, or an alternate's.
func (d *odb) baseByID(p *packFile, off int64, h plumbing.Hash, depth int, sp *spill) (*deltaBase, error) {
	missing := func(err error) error {
		if errors.Is(err, plumbing.ErrObjectNotFound) {
			return fmt.Errorf("%s.pack offset %d: %w: delta base %s is missing", p.name, off, errPackCorrupt, h)
		}
		return err
	}
	n, err := d.size(h)
	if err != nil {
		return nil, missing(err)
	}
	if n <= sp.inMemory {
		t, data, err := d.readDepth(h, 1)
		if err != nil {
			return nil, missing(err)
		}
		return &deltaBase{t: t, size: int64(len(data)), data: data}, nil
	}
	b, err := sp.spillTo(func(sink objectSink) error { return d.streamObject(h, depth+1, sp, sink) })
	return b, missing(err)
}

// countedReader reads at most left bytes of r.
type countedReader struct {
	r    io.Reader
	left int64
}

func (c *countedReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}

// readDeltaSize reads one of the two sizes a delta starts with (as
// deltaSize decodes them).
func readDeltaSize(r io.ByteReader) (uint64, bool) {
	var v uint64
	for shift := 0; shift < 64; shift += 7 {
		b, err := r.ReadByte()
		if err != nil {
			return 0, false
		}
		v |= uint64(b&0x7f) << shift
		if b&0x80 == 0 {
			return v, true
		}
	}
	return 0, false
}

// streamDelta applies the delta read from br to base and writes the
// result, size bytes, to w: the delta's two sizes (its base's, which must
// be base.size, and its result's, which must be size), its instructions,
// and nothing after them, as applyDelta reads a delta held whole.
func streamDelta(w io.Writer, base *deltaBase, br *bufio.Reader, size int64, buf []byte) error {
	src, ok1 := readDeltaSize(br)
	dst, ok2 := readDeltaSize(br)
	if !ok1 || !ok2 || src != uint64(base.size) || dst != uint64(size) {
		return errors.New("delta does not fit its base")
	}
	if err := applyDeltaStream(w, base, br, size, buf); err != nil {
		return err
	}
	switch _, err := br.ReadByte(); {
	case err == nil:
		return errors.New("delta instructions past its result")
	case err != io.EOF:
		return err
	}
	return nil
}

// applyDeltaStream is applyDelta writing the result, size bytes, to w as
// the instructions are read from delta: copies from base (through buf
// when it is a file), inserts through buf. It checks what applyDelta
// checks: every copy within the base, nothing past size.
func applyDeltaStream(w io.Writer, base *deltaBase, delta *bufio.Reader, size int64, buf []byte) error {
	var out int64
	for out < size {
		op, err := delta.ReadByte()
		if err == io.EOF {
			return errors.New("delta result shorter than its header says")
		} else if err != nil {
			return err
		}
		switch {
		case op&0x80 != 0:
			var off, n int64
			for i := 0; i < 7; i++ {
				if op&(1<<i) == 0 {
					continue
				}
				b, err := delta.ReadByte()
				if err != nil {
					return errors.New("truncated copy")
				}
				if i < 4 {
					off |= int64(b) << (8 * i)
				} else {
					n |= int64(b) << (8 * (i - 4))
				}
			}
			if n == 0 {
				n = 0x10000
			}
			if off+n > base.size || out+n > size {
				return errors.New("copy outside the base or the target")
			}
			if base.data != nil {
				if _, err := w.Write(base.data[off : off+n]); err != nil {
					return err
				}
				out += n
				continue
			}
			for n > 0 {
				k := min(n, int64(len(buf)))
				if _, err := base.f.ReadAt(buf[:k], off); err != nil {
					return fmt.Errorf("read delta base: %w", err)
				}
				if _, err := w.Write(buf[:k]); err != nil {
					return err
				}
				off, n, out = off+k, n-k, out+k
			}
		case op != 0:
			n := int64(op)
			if out+n > size {
				return errors.New("insert outside the delta or the target")
			}
			for n > 0 {
				k := min(n, int64(len(buf)))
				if _, err := io.ReadFull(delta, buf[:k]); err != nil {
					return errors.New("insert outside the delta or the target")
				}
				if _, err := w.Write(buf[:k]); err != nil {
					return err
				}
				n, out = n-k, out+k
			}
		default:
			return errors.New("reserved delta instruction 0")
		}
	}
	return nil
}
