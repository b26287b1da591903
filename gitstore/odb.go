package gitstore

// Reading objects by id from a git object directory without loading any
// pack index whole: a lookup is a binary search over the mapped .idx (the
// fan-out table narrows it to one first byte), then one read of the entry
// in the .pack, with deltas resolved through a small cache of bases. So the
// cost of opening a store and reading a few objects does not grow with the
// number of objects stored. go-git's filesystem storage decodes every index
// in full (and hashes it) on first use, which made every command on a large
// packed store pay for the whole store.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// odb is an object directory: loose objects, packs and the object
// directories its objects/info/alternates names. Not safe for concurrent
// use (the repo's mutex guards it).
type odb struct {
	dir string // the objects directory

	scanned bool        // packs holds the listing of objects/pack
	listing string      // the .idx names that listing held (idxListing's form)
	gen     uint64      // counts listings taken (scanFrom), from 1
	packs   []*packFile // newest first
	// badIdx holds the indexes of the last listing that could not be
	// opened though their pack is there (missingObject names them)
	badIdx  []DamagedIndex
	alts    []*odb
	altRead bool
	depth   int // alternates nesting

	cache baseCache
	zr    zlibReader
	fi    inflater

	// zlibOnly turns the in-place decoder off (tests compare the two).
	zlibOnly bool

	// private marks an odb of ReadBlobs' own (readmany.go): objects read
	// that are no delta base are not copied into cache (a batch reads each
	// once).
	private bool
}

func newODB(objectsDir string) *odb { return &odb{dir: objectsDir} }

// maxAlternateDepth bounds chains of alternates, as git does.
const maxAlternateDepth = 5

// Reindex makes the next lookup list objects/pack again (a gc or repack may
// have replaced the packs). Packs whose index is still there stay open.
func (d *odb) Reindex() {
	d.scanned = false
	for _, a := range d.alts {
		a.Reindex()
	}
}

// Close releases every mapped index and open pack.
func (d *odb) Close() error {
	for _, p := range d.packs {
		p.close()
	}
	d.packs, d.scanned = nil, false
	for _, a := range d.alts {
		a.Close()
	}
	d.alts, d.altRead = nil, false
	d.cache = baseCache{}
	return nil
}

// scan lists objects/pack and opens the index of each pack not open yet.
// An index that cannot be read is skipped, as git skips it.
func (d *odb) scan() {
	if d.scanned {
		return
	}
	entries, err := readDir(filepath.Join(d.dir, "pack"))
	d.scanFrom(entries, err)
}

// scanFrom is scan with objects/pack already listed (entries, err from
// os.ReadDir), so a caller that listed it to see whether the packs changed
// does not make the reader list it again.
func (d *odb) scanFrom(entries []os.DirEntry, err error) {
	d.scanned = true
	d.gen++
	d.listing = idxListing(entries)
	d.badIdx = nil
	if err != nil {
		for _, p := range d.packs {
			p.close()
		}
		d.packs = nil
		return
	}
	old := make(map[string]*packFile, len(d.packs))
	for _, p := range d.packs {
		old[p.name] = p
	}
	var packs []*packFile
	for i, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".idx")
		if !ok || !strings.HasPrefix(name, "pack-") || !packListed(entries[i+1:], name) {
			continue
		}
		if p := old[name]; p != nil {
			delete(old, name)
			packs = append(packs, p)
			continue
		}
		p, err := openPackIndex(filepath.Join(d.dir, "pack"), name)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				d.badIdx = append(d.badIdx, damagedIndex(filepath.Join(d.dir, "pack"), name, err))
			}
			continue
		}
		packs = append(packs, p)
	}
	for _, p := range old {
		d.cache.dropPack(p)
		p.close()
	}
	// Newest first: recent objects are the ones read most.
	sort.SliceStable(packs, func(i, j int) bool { return packs[i].mtime.After(packs[j].mtime) })
	d.packs = packs
}

// packListed reports whether after, the entries listed after name's
// index (sorted by name, as readDir and os.ReadDir sort them), hold its
// pack: an index whose pack is gone (a maintenance or git gc killed
// between the two unlinks) is skipped, as git skips it, so that a lookup
// finds the object in the pack that replaced it rather than stopping at
// a pack that cannot be opened.
func packListed(after []os.DirEntry, name string) bool {
	for _, e := range after {
		n := e.Name()
		if !strings.HasPrefix(n, name) || len(n) <= len(name) || n[len(name)] != '.' {
			return false
		}
		if n[len(name):] == ".pack" {
			return true
		}
	}
	return false
}

// idxListing names the pack indexes among entries of objects/pack, in the
// form the odb's listing keeps.
func idxListing(entries []os.DirEntry) string {
	var b strings.Builder
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".idx") {
			b.WriteString(e.Name())
		}
	}
	return b.String()
}

// alternates returns the object directories objects/info/alternates names.
func (d *odb) alternates() []*odb {
	if d.altRead || d.depth >= maxAlternateDepth {
		return d.alts
	}
	d.altRead = true
	data, err := os.ReadFile(filepath.Join(d.dir, "info", "alternates"))
	if err != nil {
		return nil
	}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' {
			continue
		}
		if !filepath.IsAbs(line) {
			line = filepath.Join(d.dir, line)
		}
		a := newODB(filepath.Clean(line))
		a.depth = d.depth + 1
		d.alts = append(d.alts, a)
	}
	return d.alts
}

// findPacked returns the pack holding h and the entry's offset.
func (d *odb) findPacked(h plumbing.Hash) (*packFile, int64, bool, error) {
	d.scan()
	for _, p := range d.packs {
		off, ok, err := p.find(h)
		if err != nil {
			return nil, 0, false, err
		}
		if ok {
			return p, off, true, nil
		}
	}
	return nil, 0, false, nil
}

// HasEncodedObject reports (nil) whether h is packed here or in an
// alternate, or stored loose in an alternate (the repo checks its own loose
// objects itself); plumbing.ErrObjectNotFound when it is not.
func (d *odb) HasEncodedObject(h plumbing.Hash) error {
	if _, _, ok, err := d.findPacked(h); err != nil || ok {
		return err
	}
	for _, a := range d.alternates() {
		if fileExists(filepath.Join(a.dir, filepath.FromSlash(strings.TrimPrefix(looseRel(h), "objects/")))) {
			return nil
		}
		if err := a.HasEncodedObject(h); err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
			return err
		}
	}
	return plumbing.ErrObjectNotFound
}

// read returns an object's type and content: packed, loose, then from an
// alternate. A miss is plumbing.ErrObjectNotFound. The content is the
// caller's. It is not checked against h here (readObject does that).
func (d *odb) read(h plumbing.Hash) (plumbing.ObjectType, []byte, error) {
	return d.readDepth(h, 0)
}

// maxRefDeltaDepth bounds how many objects named by id (REF_DELTA bases)
// one read may go through, so a corrupt pack whose deltas name each other
// cannot loop.
const maxRefDeltaDepth = 64

func (d *odb) readDepth(h plumbing.Hash, depth int) (plumbing.ObjectType, []byte, error) {
	return d.readDepthAtMost(h, depth, -1)
}

// readAtMost is read for an object of at most max bytes (max < 0: any
// size): one whose size, read in the same pass as its content (a pack
// entry's header, a delta's result size, a loose object's header), is
// over max is refused with an error wrapping ErrTooLarge before its
// content is inflated. The bases a delta is applied to are read whole, as
// git stores them.
func (d *odb) readAtMost(h plumbing.Hash, max int64) (plumbing.ObjectType, []byte, error) {
	return d.readDepthAtMost(h, 0, max)
}

func (d *odb) readDepthAtMost(h plumbing.Hash, depth int, max int64) (plumbing.ObjectType, []byte, error) {
	if depth > maxRefDeltaDepth {
		return 0, nil, fmt.Errorf("object %s: delta chain through more than %d objects named by id: %w", h, maxRefDeltaDepth, errPackCorrupt)
	}
	p, off, ok, err := d.findPacked(h)
	if err != nil {
		return 0, nil, err
	}
	if ok {
		t, data, err := d.readPackedAtMost(p, off, depth, nil, max)
		if !errors.Is(err, errPackGone) {
			return t, data, err
		}
		// Removed by a gc since we listed it: look elsewhere.
	}
	t, data, err := d.readLooseAtMost(filepath.Join(d.dir, h.String()[:2], h.String()[2:]), max)
	if err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
		return t, data, err
	}
	for _, a := range d.alternates() {
		t, data, err := a.readDepthAtMost(h, depth, max)
		if err == nil || !errors.Is(err, plumbing.ErrObjectNotFound) {
			return t, data, err
		}
	}
	return 0, nil, plumbing.ErrObjectNotFound
}

// readLoose reads and inflates a loose object file:
// zlib("<type> <size>\x00" content).
func (d *odb) readLoose(path string) (plumbing.ObjectType, []byte, error) {
	t, data, _, err := d.readLooseStream(path, false)
	return t, data, err
}

// readLooseAtMost is readLoose for an object of at most max bytes (max <
// 0: any size): the file is read once, and a header stating more than
// max refuses it, with an error wrapping ErrTooLarge, before the content
// is inflated.
func (d *odb) readLooseAtMost(path string, max int64) (plumbing.ObjectType, []byte, error) {
	if max < 0 {
		return d.readLoose(path)
	}
	raw, err := readLooseFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil, plumbing.ErrObjectNotFound
		}
		return 0, nil, err
	}
	if err := d.zr.reset(bytes.NewReader(raw)); err == nil {
		// a bad stream or header is decodeLoose's to report
		if _, sz, err := d.looseHeader(path); err == nil && sz > max {
			return 0, nil, tooLargeSize(sz, max)
		}
	}
	t, data, _, err := d.decodeLoose(path, raw, false)
	return t, data, err
}

// readLooseStream is readLoose that, with whole, also reads the zlib stream
// to its end: streamErr is then what reading the content stops short of
// (the stream's Adler-32 checksum, bytes after the stream), in the words of
// CheckLooseObject. err is readLoose's error; streamErr matters only
// without one.
func (d *odb) readLooseStream(path string, whole bool) (t plumbing.ObjectType, data []byte, streamErr, err error) {
	return d.readLooseStreamInto(path, whole, nil)
}

// readLooseStreamInto is readLooseStream that may return the content in
// into's memory (see readPackedInto).
func (d *odb) readLooseStreamInto(path string, whole bool, into []byte) (t plumbing.ObjectType, data []byte, streamErr, err error) {
	raw, err := readLooseFile(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil, nil, plumbing.ErrObjectNotFound
		}
		return 0, nil, nil, err
	}
	return d.decodeLooseInto(path, raw, whole, into)
}

// decodeLoose is readLooseStream on the file's bytes: decoded in place
// (inflateLoose) when it can be, else, and for every error, by
// compress/zlib.
func (d *odb) decodeLoose(path string, raw []byte, whole bool) (t plumbing.ObjectType, data []byte, streamErr, err error) {
	return d.decodeLooseInto(path, raw, whole, nil)
}

// decodeLooseInto is decodeLoose that may return the content in into's
// memory (see readPackedInto). With into not nil (empty will do) the
// content starts at the start of the buffer it was decoded into, into's or
// a new one.
func (d *odb) decodeLooseInto(path string, raw []byte, whole bool, into []byte) (t plumbing.ObjectType, data []byte, streamErr, err error) {
	if head, data, ok := d.fi.inflateLooseInto(raw, whole, into); ok && !d.zlibOnly {
		kind, _, _ := strings.Cut(string(head), " ")
		if t, err := plumbing.ParseObjectType(kind); err == nil && t >= plumbing.CommitObject && t <= plumbing.TagObject {
			if into != nil {
				// The content moved to the start of the buffer the header
				// began, so that the whole of it is reused next time.
				data = head[:copy(head[:len(data)], data)]
			}
			return t, data, nil, nil
		}
		// A bad header: compress/zlib's path below says so.
	}
	br := bytes.NewReader(raw)
	if err := d.zr.reset(br); err != nil {
		return 0, nil, nil, fmt.Errorf("loose object %s: %w", path, err)
	}
	t, sz, err := d.looseHeader(path)
	if err != nil {
		return 0, nil, nil, err
	}
	data, err = readExactly(d.zr.r, sz)
	if err != nil {
		return 0, nil, nil, fmt.Errorf("loose object %s: %w", path, err)
	}
	if whole {
		streamErr = looseStreamEnd(filepath.Base(filepath.Dir(path))+filepath.Base(path), d.zr.r, br)
	}
	return t, data, streamErr, nil
}

// looseHeader reads a loose object's header, "<type> <size>\x00", from the
// zlib stream d.zr has just been reset to (path names the file in errors).
func (d *odb) looseHeader(path string) (plumbing.ObjectType, int64, error) {
	return readLooseHeader(d.zr.r, path)
}

// readLooseHeader reads a loose object's header from its inflated stream
// r, a byte at a time (nothing past the header is consumed).
func readLooseHeader(r io.Reader, path string) (plumbing.ObjectType, int64, error) {
	var head [64]byte
	n := 0
	for {
		if n == len(head) {
			return 0, 0, fmt.Errorf("loose object %s: header too long", path)
		}
		if _, err := io.ReadFull(r, head[n:n+1]); err != nil {
			return 0, 0, fmt.Errorf("loose object %s: bad header: %w", path, err)
		}
		if head[n] == 0 {
			break
		}
		n++
	}
	kind, size, ok := strings.Cut(string(head[:n]), " ")
	t, terr := plumbing.ParseObjectType(kind)
	sz, nerr := strconv.ParseInt(size, 10, 64)
	if !ok || terr != nil || nerr != nil || sz < 0 || t < plumbing.CommitObject || t > plumbing.TagObject {
		return 0, 0, fmt.Errorf("loose object %s: bad header %q", path, truncate(head[:n]))
	}
	return t, sz, nil
}

// readExactly reads exactly n bytes from r and checks that no more follow.
// Memory is reserved as the bytes arrive, so a corrupt size cannot make it
// allocate much more than the stream holds (past a first 8 MiB). Errors
// after the n-th byte (zlib's trailing checksum) are not this read's
// concern: the content is checked against its id, and verify --read-data
// checks git's own checksums.
func readExactly(r io.Reader, n int64) ([]byte, error) {
	const prealloc = 8 << 20
	var data []byte
	if n <= prealloc {
		data = make([]byte, n)
		if got, err := io.ReadFull(r, data); int64(got) != n {
			return nil, shortContent(int64(got), n, err)
		}
	} else {
		// Doubled as the bytes arrive, but never past n: a buffer of
		// the blob's size, not of the next power of two (bytes.Buffer's
		// growth held 16 MiB for an 11.6 MB manifest, and 32 MiB for 16).
		data = make([]byte, 0, prealloc)
		for int64(len(data)) < n {
			if len(data) == cap(data) {
				grown := make([]byte, len(data), min(2*int64(cap(data)), n))
				copy(grown, data)
				data = grown
			}
			got, err := r.Read(data[len(data):cap(data)])
			data = data[:len(data)+got]
			if err != nil && int64(len(data)) < n {
				return nil, shortContent(int64(len(data)), n, err)
			}
		}
	}
	var one [1]byte
	if m, _ := r.Read(one[:]); m != 0 {
		return nil, fmt.Errorf("content is longer than the %d bytes its header says", n)
	}
	return data, nil
}

func shortContent(got, n int64, err error) error {
	if err == nil || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("content is %d bytes, its header says %d", got, n)
	}
	return err
}

// readAllFile reads the first size bytes of f.
func readAllFile(f *os.File, size int64) ([]byte, func(), error) {
	data := make([]byte, size)
	if _, err := io.ReadFull(io.NewSectionReader(f, 0, size), data); err != nil {
		return nil, nil, err
	}
	return data, func() {}, nil
}
