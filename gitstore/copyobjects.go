package gitstore

// A clone from a repository on this machine takes its objects without the
// pack protocol, as `git clone` of a local path does, but without trusting
// anything of the source but the bytes of its objects: the source's packs
// (and loose objects) are written, as one pack, into the new store, and
// indexed there in Go (indexPackGo) or, for what that leaves to git, by
// `git index-pack --strict` of the file (without mmap: streamed into
// `git index-pack --strict --stdin`); either computes every object's id
// itself, fscks every object, writes the new store's own index (the
// source's .idx is read only to see that no object is in two packs), and
// fails unless every object any of them names is there too. Nothing is
// hard-linked: a link would share its inode with a repository someone else
// may write.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"

	"github.com/readproof/readproof/internal/hint"
)

// CopyLocalObjects copies every object of the repository url names into
// the transport's repository, which must hold no object yet, when url is a
// bare repository on this machine (a path or a file:// URL, as git
// resolved it: RemoteFetchURL, AddRemoteURL) whose objects it can read
// directly. It reports false, having written nothing, for any other
// source (a remote URL, a repository with alternates, a shallow or partial
// clone, an object in two packs): the caller fetches instead. A source
// whose packs and loose objects come to more than MaxFetchBytes is refused
// (ErrFetchTooLarge) before anything is written, as a fetch of it would be.
//
// What arrives is checked as a fetch checks it (fetch.fsckObjects): every
// object hashed and fsck'd as `git index-pack --strict` does (in Go for a
// canonical subset, by git otherwise: copyIndexed), and every object
// one of them names present (in the copy: the repository was empty), so
// the copy is connected without a walk. Which objects the caller needs
// (the listed tips) it checks itself: a source gc'd during the copy may
// lack some, which the caller then fetches. An error means the source's
// objects did not check (or could not be read, or the copy could not be
// written); the repository may then hold a pack of checked objects.
//
// A source file gone between the listing and its read (a gc or automatic
// maintenance of the source packed the loose objects it listed and removed
// their files, or deleted a pack before it was opened), or replaced by
// another regular file (git's repack writes an unchanged pack again under
// its name), is no fault of the source: the copy, which wrote nothing then
// (git's index-pack stops before its pack is in place), lists the source
// again, up to copyAttempts times, and then leaves it to the caller's
// fetch. So does an object of the copy that names one the listing did not
// see (indexPackError).
func (t *Transport) CopyLocalObjects(ctx context.Context, url string) (bool, error) {
	return t.CopyLocalObjectsKeeping(ctx, url, nil)
}

// CopyLocalObjectsKeeping is CopyLocalObjects that, when the copy is
// indexed in Go, hands the objects it hashed to kept (CopiedObjects) as
// soon as the index is done, and closes kept.Indexed() then, or before
// git indexes a copy the Go index does not read (no mmap, a pack over
// maxIndexedPack), or when it returns, whichever is first. When it fails
// (or is stopped), reads through kept fail with its error from then on.
func (t *Transport) CopyLocalObjectsKeeping(ctx context.Context, url string, kept *CopiedObjects) (copied bool, err error) {
	defer func() {
		kept.fail(err) // before Indexed: a reader waiting for it reads nothing
		kept.finish()
	}()
	dir, ok := localRepoPath(url)
	if !ok {
		return false, nil
	}
	if fileExists(filepath.Join(dir, "shallow")) {
		return false, nil
	}
	for attempt := 1; ; attempt++ {
		copied, err := t.copyLocalObjects(ctx, url, dir, kept)
		if !errors.Is(err, errSourceChanged) {
			return copied, err
		}
		// index-pack, stopped by the short input, left its temporary
		// pack: the repository had no object, so nobody else's
		if tmps, _ := filepath.Glob(filepath.Join(t.dir, "objects", "pack", "tmp_*")); len(tmps) > 0 {
			for _, f := range tmps {
				os.Remove(f)
			}
		}
		if attempt == copyAttempts || ctx.Err() != nil {
			return false, ctx.Err()
		}
	}
}

// IsLocalStore reports whether url names a repository on this machine
// (as CopyLocalObjects takes it) whose config marks it a readproof store,
// read as listLocal reads it (a regular file of at most maxLocalConfig
// bytes, never a FIFO or a device). A clone starts copying such a source
// while it is recognized; anything else (a project's repository) is
// copied only once recognized, so nothing of a source refused is ever
// written beside the clone's target, where a clone killed meanwhile
// would leave it.
func IsLocalStore(url string) bool {
	dir, ok := localRepoPath(url)
	if !ok {
		return false
	}
	data, err := readSmallFile(filepath.Join(dir, "config"), maxLocalConfig)
	if err != nil {
		return false
	}
	cfg := gitconfig.New()
	if gitconfig.NewDecoder(bytes.NewReader(data)).Decode(cfg) != nil {
		return false
	}
	return hasMarker(cfg)
}

// copyAttempts is how many times CopyLocalObjects lists a source whose
// files go while it copies them before it leaves the source to the fetch.
const copyAttempts = 3

// errSourceChanged: the source changed while it was copied: a file the
// copy listed was gone, or replaced by another regular file, when it was
// opened, or an object of the copy names one the listing did not see.
var errSourceChanged = errors.New("the source changed while it was copied")

// copyLocalObjects is one attempt of CopyLocalObjects; errSourceChanged
// when the source changed meanwhile.
func (t *Transport) copyLocalObjects(ctx context.Context, url, dir string, kept *CopiedObjects) (bool, error) {
	src, ok, err := openCopySource(filepath.Join(dir, "objects"))
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, errSourceReplaced) {
		return true, fmt.Errorf("%w: %w", errSourceChanged, err)
	}
	if errors.Is(err, errSourceSwapped) {
		// a file swapped for a link while the copy looked at it: refused,
		// and said, not fetched through git (which would follow the link)
		return true, fmt.Errorf("copy the objects of %s: %w", RedactURL(url), err)
	}
	if err != nil || !ok {
		return false, nil // the fetch reads the source its own way
	}
	defer src.close()
	if err := src.checkBound(url, t.maxFetch()); err != nil {
		return true, err
	}
	if canMap && t.objects == "" {
		return t.copyIndexed(ctx, src, url, kept)
	}
	// git indexes the copy and nothing is kept: a reader waiting for
	// the Go index reads the source meanwhile
	kept.finish()
	args := []string{"-c", bigObjects, "index-pack", "--strict", "--stdin"}
	progress := t.opts.Progress != nil
	if progress {
		args = append(args, "-v") // "Receiving objects", "Resolving deltas"
	}
	if len(src.packs) == 1 && len(src.loose) == 0 {
		// one pack as it is: git reads the file itself (its offset is 0:
		// it was only read at offsets)
		if _, err := t.runInput(ctx, progress, src.packs[0].packFile, args...); err != nil {
			return true, src.indexPackError(url, err)
		}
		return true, nil
	}
	pr, pw := io.Pipe()
	written := make(chan error, 1)
	go func() {
		err := src.writeTo(ctx, pw)
		pw.CloseWithError(err)
		written <- err
	}()
	_, err = t.runInput(ctx, progress, pr, args...)
	pr.CloseWithError(errors.Join(err, io.ErrClosedPipe)) // stops the writer if git stopped reading
	// The writer is done with the source (closed when this returns) before
	// this returns; its own error (a source object that could not be read)
	// says more than git's "early EOF".
	if werr := <-written; werr != nil && !errors.Is(werr, io.ErrClosedPipe) {
		return true, src.writeError(url, werr)
	}
	if err != nil {
		return true, src.indexPackError(url, err)
	}
	return true, nil
}

// checkBound refuses, before anything is written, a copy whose source's
// objects (its packs and loose files, as they lie on disk: what the copy
// writes) come to more than limit, the fetch bound (MaxFetchBytes) that
// a fetch of the same source would have met.
func (c *copySource) checkBound(url string, limit int64) error {
	var n int64
	for _, p := range c.packs {
		n += p.packSize
	}
	for _, fi := range c.looseInfo {
		n += fi.Size()
	}
	if n <= limit {
		return nil
	}
	raise := limit
	for raise < n && raise <= math.MaxInt64/2 {
		raise *= 2
	}
	return hint.With(fmt.Errorf("%w (%s): the objects of %s come to %d bytes", ErrFetchTooLarge, sizeText(limit), RedactURL(url), n),
		"nothing was copied; if you mean to copy that much, raise the limit: "+MaxFetchFlag+" "+sizeText(raise))
}

// writeError is the error of a copy whose source could not be read:
// errSourceChanged when a file it listed went or was replaced.
func (c *copySource) writeError(url string, err error) error {
	if errors.Is(err, os.ErrNotExist) || errors.Is(err, errSourceReplaced) {
		return fmt.Errorf("%w: %w", errSourceChanged, err)
	}
	return fmt.Errorf("copy the objects of %s: %w", RedactURL(url), err)
}

// trimPackOver is the size of a copy's pack over which the Go index's
// mapping of it is trimmed every trimPeriod (mapFileOnce): a 192 MB pack
// held 211 MB of peak RSS.
const (
	trimPackOver = 64 << 20
	trimPeriod   = 20 * time.Millisecond
)

// maxIndexedPack bounds the pack copyIndexed maps and indexes in Go; a
// larger one is indexed by git.
const maxIndexedPack = 1 << 30

// copyIndexed writes the copy as one pack file in the new store (the one
// pack of the source as it is, or writeTo's stream), then indexes and
// checks it in Go (indexPackGo), or, when that leaves it to git, with
// `git index-pack --strict` of the file, which decides as it did of the
// stream; then the pack and its index go in place under the name of the
// pack's checksum, the index last. On any failure both temporary files
// are removed.
func (t *Transport) copyIndexed(ctx context.Context, src *copySource, url string, kept *CopiedObjects) (bool, error) {
	packDir := filepath.Join(t.dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o700); err != nil {
		return true, err
	}
	tmp, err := os.CreateTemp(packDir, "tmp_pack_")
	if err != nil {
		return true, err
	}
	tmpPack, tmpIdx := tmp.Name(), ""
	placed := false
	defer func() {
		if !placed {
			os.Remove(tmpPack)
			if tmpIdx != "" {
				os.Remove(tmpIdx)
			}
		}
	}()
	progress := t.opts.Progress
	if progress != nil {
		// the meter of the copy, in git's words (the fallback's index-pack
		// adds its own, "Indexing objects")
		fmt.Fprintf(progress, "Receiving objects:   0%% (0/%d)\r", src.count)
	}
	if len(src.packs) == 1 && len(src.loose) == 0 {
		p := src.packs[0]
		err = copyFileCtx(ctx, tmp, p.packFile, p.packSize)
	} else {
		err = src.writeTo(ctx, tmp)
	}
	if err != nil {
		tmp.Close()
		return true, src.writeError(url, err)
	}
	if progress != nil {
		fmt.Fprintf(progress, "Receiving objects: 100%% (%d/%d), done.\n", src.count, src.count)
	}
	fi, err := tmp.Stat()
	if err != nil {
		tmp.Close()
		return true, err
	}
	var idx []byte
	var sum [20]byte
	if fi.Size() >= 32 && fi.Size() <= maxIndexedPack {
		mapf := mapFile
		if fi.Size() > trimPackOver {
			// read once, front to back, but for delta bases: the peak RSS
			// is what the index reads in trimPeriod, not the whole pack
			mapf = func(f *os.File, size int64) ([]byte, func(), error) { return mapFileOnce(f, size, trimPeriod) }
		}
		data, unmap, err := mapf(tmp, fi.Size())
		if err != nil {
			tmp.Close()
			return true, err
		}
		var objs *keptObjects
		idx, objs, _ = indexPackKeeping(ctx, data, kept != nil)
		if objs != nil {
			kept.m.Store(objs)
		}
		copy(sum[:], data[len(data)-20:])
		unmap()
	}
	// the Go index is done, or was not tried (a pack over
	// maxIndexedPack): a reader waiting for it goes on while git indexes
	kept.finish()
	if err := ctx.Err(); err != nil {
		tmp.Close()
		return true, err
	}
	if err := tmp.Close(); err != nil {
		return true, err
	}
	mode := t.objectMode()
	if idx != nil {
		f, err := os.CreateTemp(packDir, "tmp_idx_")
		if err != nil {
			return true, err
		}
		tmpIdx = f.Name()
		_, err = f.Write(idx)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return true, err
		}
	} else {
		// git decides: the same file, indexed by git
		tmpIdx = tmpPack + ".idx"
		args := []string{"-c", bigObjects, "-c", "pack.writeReverseIndex=false", "index-pack", "--strict", "-o", tmpIdx}
		if progress != nil {
			args = append(args, "-v") // "Indexing objects", "Resolving deltas"
		}
		out, err := t.run(ctx, progress != nil, append(args, tmpPack)...)
		if err != nil {
			return true, src.indexPackError(url, err)
		}
		// file mode prints the pack's checksum: the name
		hx := strings.TrimSpace(string(out))
		if !plumbing.IsHash(hx) {
			return true, fmt.Errorf("copy the objects of %s: git index-pack printed %q, not a pack name", RedactURL(url), hx)
		}
		sum = plumbing.NewHash(hx)
	}
	name := filepath.Join(packDir, "pack-"+plumbing.Hash(sum).String())
	for _, f := range []string{tmpPack, tmpIdx} {
		if err := os.Chmod(f, mode); err != nil {
			return true, err
		}
	}
	if err := renameFile(tmpPack, name+".pack"); err != nil {
		return true, err
	}
	if err := renameFile(tmpIdx, name+".idx"); err != nil {
		os.Remove(name + ".pack")
		return true, err
	}
	placed = true
	return true, nil
}

// copyChunk is how much copyFileCtx copies between two looks at its
// context: a few milliseconds of copying.
const copyChunk = 1 << 20

// copyFileCtx writes the first n bytes of f (fewer if it is shorter) to
// w, a chunk at a time, and stops with ctx's error when ctx ends: Ctrl-C
// during the copy of a large pack stops it within a chunk rather than at
// the end of the file.
func copyFileCtx(ctx context.Context, w io.Writer, f io.ReaderAt, n int64) error {
	buf := make([]byte, min(n, copyChunk))
	for off := int64(0); off < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := f.ReadAt(buf[:min(n-off, int64(len(buf)))], off)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return werr
			}
			off += int64(k)
		}
		if err == io.EOF {
			return nil // a file cut short is copied short, as io.Copy does: its index then fails
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// objectMode is the mode git gives the object files of the transport's
// repository (its core.sharedRepository).
func (t *Transport) objectMode() os.FileMode {
	cfg, _ := readConfig(t.dir) // unreadable: private, as a store without one
	return permsFromConfig(cfg).object()
}

// indexPackError is the error of a failed index-pack of the copy:
// errSourceChanged when an object of the copy names one the listing did
// not see ("did not receive expected object" of an id that no listed pack
// or loose file bears), which is what a listing that met a writer of the
// source halfway sees (it walks the fan-out directories in order, and can
// take a commit without the tree written before it), and what an
// unreachable object naming a pruned one gives at every listing (the
// fetch, which takes only what the refs reach, then copies it). An id the
// listing saw is an object of the source that does not hash to its name:
// the copy's refusal.
func (c *copySource) indexPackError(url string, err error) error {
	const missing = "did not receive expected object "
	if _, after, ok := strings.Cut(err.Error(), missing); ok && len(after) >= 40 {
		if plumbing.IsHash(after[:40]) && !c.listed(plumbing.NewHash(after[:40])) {
			return fmt.Errorf("%w: %w", errSourceChanged, err)
		}
	}
	return fmt.Errorf("copy the objects of %s: %w", RedactURL(url), err)
}

// listed reports whether the listing saw an object named h: in a pack's
// index or as a loose file.
func (c *copySource) listed(h plumbing.Hash) bool {
	cmp := func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) }
	if _, ok := slices.BinarySearchFunc(c.packed, h, cmp); ok {
		return true
	}
	return slices.Contains(c.looseListed, h)
}

// copySource is what CopyLocalObjects sends: the packs with their indexes,
// and the loose objects no pack holds (with what lstat said of each, which
// the open of it must find again: openSourceFile).
type copySource struct {
	objects   string
	root      *os.Root // objects/: no file is opened outside it
	packs     []*packFile
	loose     []plumbing.Hash
	looseInfo []os.FileInfo
	// fans holds the fan-out directories of the loose objects, opened
	// once each (nil: not a real directory), so a loose object is looked
	// at and opened with one system call each
	fans  map[byte]*os.Root
	count int
	// packed holds the ids the packs' indexes list, sorted; looseListed
	// every loose object listed, packed too or not (indexPackError)
	packed      []plumbing.Hash
	looseListed []plumbing.Hash
}

func (c *copySource) close() {
	for _, p := range c.packs {
		p.close()
	}
	for _, f := range c.fans {
		if f != nil {
			f.Close()
		}
	}
	if c.root != nil {
		c.root.Close()
	}
}

// openFan opens the fan-out directory name of root as a root of its own,
// when it is a real directory (not a symbolic link; the one lstat saw);
// nil otherwise.
func openFan(root *os.Root, name string) *os.Root {
	fi, err := root.Lstat(name)
	if err != nil || !fi.IsDir() {
		return nil
	}
	fan, err := root.OpenRoot(name)
	if err != nil {
		return nil
	}
	if st, err := fan.Stat("."); err != nil || !os.SameFile(st, fi) {
		fan.Close()
		return nil
	}
	return fan
}

// sourceListed, when a test sets it, is called once openCopySource has
// looked at (lstat) every file it will read and before it opens any: a
// test swaps a file for a symbolic link there.
var sourceListed func(objects string)

// openCopySource lists and opens the packs and loose objects of objects/.
// It reports false for what it does not copy (alternates, a promisor or
// version 1 index, an object in two packs, no object at all, a symbolic
// link where a file or directory is expected). Every file is opened
// through openSourceFile: a file swapped for a link (or another file)
// between the look at it and the open is an error naming it
// (errSourceSwapped), not read.
func openCopySource(objects string) (*copySource, bool, error) {
	if fileExists(filepath.Join(objects, "info", "alternates")) {
		return nil, false, nil
	}
	// Only real files are read: a symbolic link in objects/ could make the
	// copy take files from anywhere this user can read (git's local clone
	// refuses them too). The fetch reads such a source through git.
	dirInfo, err := os.Lstat(objects)
	if err != nil || !dirInfo.IsDir() {
		return nil, false, nil
	}
	root, err := os.OpenRoot(objects)
	if err != nil {
		return nil, false, nil
	}
	c := &copySource{objects: objects, root: root, fans: map[byte]*os.Root{}}
	ok := false
	defer func() {
		if !ok {
			c.close()
		}
	}()
	if fi, err := root.Stat("."); err != nil || !os.SameFile(fi, dirInfo) {
		return nil, false, nil // objects/ was swapped for a link meanwhile
	}
	if fi, err := root.Lstat("pack"); err == nil && !fi.IsDir() {
		return nil, false, nil
	}
	var names []string
	if d, err := root.Open("pack"); err == nil {
		names, err = d.Readdirnames(-1)
		d.Close()
		if err != nil {
			return nil, false, err
		}
	} else if !os.IsNotExist(err) {
		return nil, false, err
	}
	slices.Sort(names)
	type listedPack struct {
		base          string
		idxFI, packFI os.FileInfo
	}
	var listed []listedPack
	for _, n := range names {
		base, isIdx := strings.CutSuffix(n, ".idx")
		if !isIdx || !strings.HasPrefix(base, "pack-") {
			continue
		}
		if !slices.Contains(names, base+".pack") {
			continue // not in place yet: its objects are in another pack or loose
		}
		if slices.Contains(names, base+".promisor") {
			return nil, false, nil
		}
		lp := listedPack{base, lstatSourceFile(root, "pack/"+n), lstatSourceFile(root, "pack/"+base+".pack")}
		if lp.idxFI == nil || lp.packFI == nil {
			return nil, false, nil
		}
		listed = append(listed, lp)
	}
	var looseFound []plumbing.Hash
	var looseInfo []os.FileInfo
	for _, h := range listLoose(objects) {
		hx := h.String()
		fan, seen := c.fans[h[0]]
		if !seen {
			fan = openFan(root, hx[:2])
			c.fans[h[0]] = fan
		}
		if fan == nil {
			return nil, false, nil
		}
		fi := lstatSourceFile(fan, hx[2:])
		if fi == nil {
			return nil, false, nil
		}
		looseFound = append(looseFound, h)
		looseInfo = append(looseInfo, fi)
	}
	if sourceListed != nil {
		sourceListed(objects)
	}
	packDir := filepath.Join(objects, "pack")
	var ids []plumbing.Hash
	for _, lp := range listed {
		f, err := openSourceFile(root, "pack/"+lp.base+".idx", lp.idxFI)
		if err != nil {
			return nil, false, err
		}
		p, err := mapPackIndex(f, packDir, lp.base)
		if err != nil {
			return nil, false, err
		}
		packFI := lp.packFI
		p.openFile = func() (*os.File, error) { return openSourceFile(root, "pack/"+p.name+".pack", packFI) }
		c.packs = append(c.packs, p)
		if p.version != 2 {
			return nil, false, nil
		}
		if err := p.openPack(); err != nil {
			return nil, false, err
		}
		for i := 0; i < p.count; i++ {
			var h plumbing.Hash
			copy(h[:], p.idAt(i))
			ids = append(ids, h)
		}
		c.count += p.count
	}
	slices.SortFunc(ids, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return nil, false, nil // one pack cannot hold it twice
		}
	}
	for i, h := range looseFound {
		if _, found := slices.BinarySearchFunc(ids, h, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) }); !found {
			c.loose = append(c.loose, h)
			c.looseInfo = append(c.looseInfo, looseInfo[i])
		}
	}
	c.packed, c.looseListed = ids, looseFound
	c.count += len(c.loose)
	if c.count == 0 || c.count >= 1<<32 {
		return nil, false, nil
	}
	ok = true
	return c, true, nil
}

// streamLooseOver: a loose object whose file is larger is streamed into
// the pack instead of inflated whole. Deflate shrinks at most about 1,032
// times, so what is inflated whole stays under 17 MiB.
const streamLooseOver = 16 << 10

// writeTo writes one pack of every object: a new header, each pack's
// entries byte for byte (an OFS_DELTA's base is a distance back, which
// concatenation keeps), each loose object as a whole entry, and the
// checksum of all that. It stops with ctx's error when ctx ends, within a
// chunk of a pack (copyFileCtx) or a read of a large loose object.
//
// The packs are read with pread, not through the mapping the reader makes:
// a source someone truncates while it is read is then a short read, an
// error, not a fault in this process.
func (c *copySource) writeTo(ctx context.Context, w io.Writer) error {
	sum := sha1.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, sum), 256<<10)
	hdr := packFileHeader(c.count)
	bw.Write(hdr[:])
	for _, p := range c.packs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if p.packSize < packHdrLen+20 {
			return fmt.Errorf("%s.pack: %w: too short", p.name, errPackCorrupt)
		}
		// in chunks, the context looked at before each: Ctrl-C stops the
		// copy of a large pack within a chunk, as the lone pack's
		if err := copyFileCtx(ctx, bw, io.NewSectionReader(p.packFile, packHdrLen, p.packSize-packHdrLen-20), p.packSize-packHdrLen-20); err != nil {
			return err
		}
	}
	d := newODB(c.objects)
	defer d.Close()
	zw, _ := zlib.NewWriterLevel(bw, zlib.BestSpeed)
	for i, h := range c.loose {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		hx := h.String()
		f, err := openSourceFile(c.fans[h[0]], hx[2:], c.looseInfo[i])
		if err != nil {
			return fmt.Errorf("loose object %s: %w", h, err)
		}
		raw, err := readWholeSized(f, c.looseInfo[i].Size()) // its fstat was openSourceFile's
		f.Close()
		if err != nil {
			return fmt.Errorf("loose object %s: %w", h, err)
		}
		path := filepath.Join(c.objects, hx[:2], hx[2:])
		if len(raw) > streamLooseOver {
			// It may inflate to a thousand times its size: streamed
			// from its zlib into the pack's, never held whole.
			if err := d.zr.reset(bytes.NewReader(raw)); err != nil {
				return fmt.Errorf("loose object %s: %w", path, err)
			}
			t, sz, err := d.looseHeader(path)
			if err != nil {
				return err
			}
			bw.Write(packHeader(t, int(sz)))
			zw.Reset(bw)
			if _, err := io.CopyN(zw, ctxReader{ctx, d.zr.r}, sz); err != nil {
				if cerr := ctx.Err(); cerr != nil {
					return cerr
				}
				return fmt.Errorf("loose object %s: %w", path, unexpectedEOF(err))
			}
			if err := zw.Close(); err != nil {
				return err
			}
			continue
		}
		t, data, _, err := d.decodeLoose(path, raw, false)
		if err != nil {
			return fmt.Errorf("loose object %s: %w", h, err)
		}
		bw.Write(packHeader(t, len(data))) // then the content, deflated straight after it
		zw.Reset(bw)
		zw.Write(data)
		if err := zw.Close(); err != nil {
			return err
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(sum.Sum(nil))
	return err
}

// ctxReader is r that fails with ctx's error once ctx ends: a large loose
// object streamed into writeTo's pack stops within a read of it.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// OpenLocalSource opens the repository url names for reading, when it is
// a bare repository on this machine (as CopyLocalObjects takes it); false
// for anything else. Every object read through it is checked against its
// id, as from any Store, so what is read is what a copy or a fetch of the
// same ids holds. Nothing is written to it.
func OpenLocalSource(url string) (Store, bool) {
	return OpenLocalSourceWith(url, nil)
}

// OpenLocalSourceWith is OpenLocalSource whose reads take the objects
// copied holds (once it holds them) instead of reading them from the
// source.
func OpenLocalSourceWith(url string, copied *CopiedObjects) (Store, bool) {
	dir, ok := localRepoPath(url)
	if !ok {
		return nil, false
	}
	s, err := OpenWithOptions(dir, Options{})
	if err != nil {
		return nil, false
	}
	if r, ok := s.(*repo); ok {
		r.copied = copied
	}
	return s, true
}

// realDir reports whether path is a directory, not a symbolic link.
func realDir(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && fi.IsDir()
}
