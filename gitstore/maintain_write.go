package gitstore

// The incremental step of automatic maintenance (maintain.go): the loose
// objects are packed by this process, with no git process and no copy of
// them anywhere else. Each loose file is read once and its content checked
// against its name; an object that cannot be read or does not hash to its
// name is left out (and so stays loose, for verify and git fsck to report).
// The objects are ordered as git pack-objects orders them when it has no
// paths (by type, then largest first), each is tried as a delta of the
// pack.window (10) objects of its type before it, as git does (delta.go;
// chains at most pack.depth, 50, long; a delta kept only when it is at most
// half the object's size, less 20 bytes, as git keeps them), and every
// entry is compressed at pack.compression (core.compression, or zlib's
// fastest level; see readPackSettings). The pack and its index are written to temporary files, each
// synced and renamed into objects/pack (the pack first: git ignores a pack
// without an index), and every object is then read back from the new pack
// through the store's own pack reader and compared with what was read from
// its loose file. Only after that, and after the directory naming the new
// files is synced, do the loose files go.
//
// Stock git reads a loose object through several open/mmap/inflate cycles
// (to list it, to learn its type and size, for the delta search and to
// write it), and starting it, writing a staging pack for it to read and
// laying out a repository for it to run in cost more than the packing: the
// earlier design (a staging pack fed to `git pack-objects
// --no-reuse-object`) spent about half of each pass outside the packing.

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
)

const (
	// maintainBudget bounds the content one pass holds in memory; loose
	// objects past it stay loose for the next pass.
	maintainBudget = 64 << 20
	// maxDeltaObject is the largest object tried as a delta or a base.
	maxDeltaObject = 16 << 20
	defaultWindow  = 10
	defaultDepth   = 50
)

// packSettings are the git config values a maintenance pack follows.
type packSettings struct {
	window, depth, level int
}

// readPackSettings reads pack.window, pack.depth and pack.compression (or
// core.compression) from the store's config, with git's defaults, except
// that the compression is zlib's fastest level when neither is set:
// compress/flate clears 640 KB of tables before each stream at the other
// levels, which cost more than the whole delta search for a pass of a few
// hundred small objects, and the fastest level made the pack of such a
// pass 3% larger. gc recompresses at git's level.
func readPackSettings(gitDir string) packSettings {
	ps := packSettings{window: defaultWindow, depth: defaultDepth, level: zlib.BestSpeed}
	cfg, err := readConfig(gitDir)
	if err != nil {
		return ps
	}
	num := func(section, key string, lo, hi int) (int, bool) {
		v := strings.TrimSpace(cfg.Section(section).Options.Get(key))
		n, err := strconv.Atoi(v)
		if v == "" || err != nil || n < lo || n > hi {
			return 0, false
		}
		return n, true
	}
	if n, ok := num("pack", "window", 0, 1000); ok {
		ps.window = n
	}
	if n, ok := num("pack", "depth", 0, 4095); ok {
		ps.depth = n
	}
	if n, ok := num("core", "compression", -1, 9); ok {
		ps.level = n
	}
	if n, ok := num("pack", "compression", -1, 9); ok {
		ps.level = n
	}
	return ps
}

// packObj is an object on its way into a maintenance pack.
type packObj struct {
	h     plumbing.Hash
	t     plumbing.ObjectType
	data  []byte
	base  int32  // the delta base's index in the sorted list; -1: whole
	depth int32  // delta chain length down to a whole object
	delta []byte // with base
	off   int64  // where its entry starts in the pack
	loose bool   // read from a loose file (packLoose removes it), not a small pack
}

// readLooseObjects reads the loose objects ids under objects, each checked
// against its id, until maintainBudget bytes of content are held. Those
// that cannot be read or do not hash to their id are left out. The ids are
// read in two halves side by side (each half within half the budget).
func readLooseObjects(ctx context.Context, objects string, ids []plumbing.Hash) ([]packObj, error) {
	parts := [][]plumbing.Hash{ids}
	if len(ids) >= 64 {
		parts = [][]plumbing.Hash{ids[:len(ids)/2], ids[len(ids)/2:]}
	}
	got := make([][]packObj, len(parts))
	var wg sync.WaitGroup
	for i, part := range parts {
		wg.Go(func() { got[i] = readLooseRange(ctx, objects, part, maintainBudget/len(parts)) })
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return append(got[0], slices.Concat(got[1:]...)...), nil
}

// readLooseRange is one half of readLooseObjects, within budget bytes.
func readLooseRange(ctx context.Context, objects string, ids []plumbing.Hash, budget int) []packObj {
	d := newODB(objects) // a private decoder: s.st is the repo's, under s.mu
	objs := make([]packObj, 0, len(ids))
	held := 0
	path := loosePathBuf(objects)
	for i, h := range ids {
		if i%64 == 0 && ctx.Err() != nil {
			return nil
		}
		setLooseID(path, len(objects), h)
		// as every read of a loose object (readLooseFile): a file that
		// is not a regular one, a symbolic link above all, is damage that
		// verify reports; packed, its content would live on under the
		// id and the link be removed, the damage gone unnoticed
		raw, err := readLooseFile(string(path))
		if err != nil {
			continue
		}
		t, data, _, err := d.decodeLoose(string(path), raw, false)
		if err != nil || objectHash(t, data) != h {
			continue
		}
		objs = append(objs, packObj{h: h, t: t, data: data, base: -1})
		if held += len(data); held >= budget {
			break
		}
	}
	return objs
}

// findDeltas orders objs as git pack-objects orders objects without paths
// (type, then size, largest first; ids break ties) and picks each one's
// delta base among the window objects of its type before it, by git's
// rules (builtin/pack-objects.c try_delta): a base is taken only when its
// chain is shorter than depth and the delta is at most half the object's
// size less 20 bytes (a shorter bound the deeper the base), and a later
// base only when its delta is smaller. Every base comes before its deltas.
func findDeltas(ctx context.Context, objs []packObj, window, depth int) error {
	sort.Slice(objs, func(i, j int) bool {
		a, b := &objs[i], &objs[j]
		if a.t != b.t {
			return a.t < b.t
		}
		if len(a.data) != len(b.data) {
			return len(a.data) > len(b.data)
		}
		return bytes.Compare(a.h[:], b.h[:]) < 0
	})
	if window <= 0 || depth <= 0 {
		return nil
	}
	// Deltas are only ever between objects of one type: each type's run
	// of objects is searched on its own, side by side.
	var wg sync.WaitGroup
	for next := 0; next < len(objs); {
		lo, hi := next, next+1
		for hi < len(objs) && objs[hi].t == objs[lo].t {
			hi++
		}
		wg.Go(func() { deltasOfType(ctx, objs, lo, hi, window, depth) })
		next = hi
	}
	wg.Wait()
	return ctx.Err()
}

// deltasOfType is findDeltas for objs[lo:hi], objects of one type.
func deltasOfType(ctx context.Context, objs []packObj, lo, hi, window, depth int) {
	type cand struct {
		i int
		x *deltaIndex
	}
	ring := make([]cand, 0, window)
	var scratch []byte
	for i := lo; i < hi; i++ {
		if (i-lo)%64 == 0 && ctx.Err() != nil {
			return
		}
		o := &objs[i]
		size := len(o.data)
		if size <= maxDeltaObject {
			for k := len(ring) - 1; k >= 0; k-- {
				c := &ring[k]
				b := &objs[c.i]
				if int(b.depth) >= depth {
					continue
				}
				maxSize, refDepth := size/2-20, 1
				if o.delta != nil {
					maxSize, refDepth = len(o.delta), int(o.depth)
				}
				maxSize = int(int64(maxSize) * int64(depth-int(b.depth)) / int64(depth-refDepth+1))
				if maxSize <= 0 {
					continue
				}
				if len(b.data) < size && size-len(b.data) >= maxSize {
					continue
				}
				if size < len(b.data)/32 {
					continue
				}
				if c.x == nil {
					c.x = newDeltaIndex(b.data)
				}
				d := c.x.deltaTo(scratch, o.data, maxSize)
				if d == nil {
					continue
				}
				scratch = d
				if o.delta != nil && len(d) == len(o.delta) && b.depth+1 >= o.depth {
					continue
				}
				o.delta, o.base, o.depth = append(o.delta[:0], d...), int32(c.i), b.depth+1
			}
		}
		if size > maxDeltaObject {
			continue // never a base either
		}
		if len(ring) == window {
			copy(ring, ring[1:])
			ring = ring[:window-1]
		}
		ring = append(ring, cand{i: i})
	}
}

// writeMaintPack writes objs (ordered and with their deltas, findDeltas)
// as a pack and its version 2 index in objects/pack: each written to a
// temporary file, synced and renamed into place, the pack first. It
// returns the pack's name ("pack-<checksum>") and whether it made the pack
// (a pack of that name, the same bytes, may be there already). The
// directory is not synced here.
func (s *repo) writeMaintPack(objs []packObj, level int) (name string, made bool, err error) {
	dir := filepath.Join(s.path, "objects", "pack")
	po, err := s.newPackOut(dir, len(objs))
	if err != nil {
		return "", false, err
	}
	defer os.Remove(po.tmp.Name()) // a no-op once renamed
	tmp, w := po.tmp, po.w
	off := int64(packHdrLen)
	// Each entry's content (the object, or its delta) is compressed first,
	// in two halves side by side; the offsets, which the delta entries'
	// headers name, follow from the compressed sizes.
	zs := make([][]byte, len(objs))
	var wg sync.WaitGroup
	var zerr [2]error
	for half := 0; half < 2; half++ {
		lo, hi := half*len(objs)/2, (half+1)*len(objs)/2
		wg.Go(func() {
			zw, err := zlib.NewWriterLevel(nil, level)
			if err != nil {
				zerr[half] = err
				return
			}
			var z bytes.Buffer
			for i := lo; i < hi; i++ {
				content := objs[i].data
				if objs[i].base >= 0 {
					content = objs[i].delta
				}
				z.Reset()
				zw.Reset(&z)
				zw.Write(content)
				if err := zw.Close(); err != nil {
					zerr[half] = err
					return
				}
				zs[i] = bytes.Clone(z.Bytes())
			}
		})
	}
	wg.Wait()
	if err := errors.Join(zerr[:]...); err != nil {
		tmp.Close()
		return "", false, err
	}
	var head []byte
	entries := make([]indexEntry, len(objs))
	for i := range objs {
		o := &objs[i]
		o.off = off
		if o.base >= 0 {
			head = append(packHeader(plumbing.OFSDeltaObject, len(o.delta)), ofsDelta(off-objs[o.base].off)...)
		} else {
			head = packHeader(o.t, len(o.data))
		}
		crc := crc32.Update(crc32.ChecksumIEEE(head), crc32.IEEETable, zs[i])
		entries[i] = indexEntry{h: o.h, off: uint64(off), crc: crc}
		w.Write(head)
		if _, err := w.Write(zs[i]); err != nil {
			tmp.Close()
			return "", false, err
		}
		off += int64(len(head) + len(zs[i]))
	}
	packSum, err := po.finish(s.perm.object())
	if err != nil {
		return "", false, err
	}
	return s.placePack(dir, tmp.Name(), packSum, entries)
}

// placePack renames the written and synced pack tmpPack into packDir as
// pack-<packSum>.pack, then writes, syncs and renames its index of
// entries beside it. When a pack of that name is there already (the same
// bytes) it is left as it is and made is false.
func (s *repo) placePack(packDir, tmpPack string, packSum []byte, entries []indexEntry) (name string, made bool, err error) {
	name = "pack-" + hex.EncodeToString(packSum)
	if fileExists(filepath.Join(packDir, name+".pack")) && fileExists(filepath.Join(packDir, name+".idx")) {
		return name, false, nil
	}
	if err := renameFile(tmpPack, filepath.Join(packDir, name+".pack")); err != nil {
		return "", false, err
	}
	if err := s.writeFileAtomic(filepath.Join(packDir, name+".idx"), encodeIndex(entries, packSum), true); err != nil {
		return "", false, err
	}
	return name, true, nil
}

// closeTemp gives a written temporary file its mode, syncs it when sync is
// set and closes it (on an error too).
func closeTemp(f *os.File, mode os.FileMode, sync bool) error {
	err := f.Chmod(mode)
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// ofsDelta encodes the distance back to an OFS_DELTA entry's base as git
// does: base-128, most significant group first, each continued group less
// one.
func ofsDelta(back int64) []byte {
	var b [10]byte
	i := len(b) - 1
	b[i] = byte(back & 0x7f)
	for back >>= 7; back > 0; back >>= 7 {
		back--
		i--
		b[i] = 0x80 | byte(back&0x7f)
	}
	return b[i:]
}

// checkMaintPack reads every object of objs back from the pack name
// through the store's pack reader (index lookup, inflation, deltas) and
// compares it with the content it was written from. The loose files go
// only when this passes: a fault in writing the pack loses nothing.
func checkMaintPack(packDir, name string, objs []packObj) error {
	p, err := openPackIndex(packDir, name)
	if err != nil {
		return err
	}
	defer p.close()
	if p.count != len(objs) {
		return fmt.Errorf("maintenance pack %s: index lists %d objects, %d written", name, p.count, len(objs))
	}
	d := newODB(filepath.Dir(packDir))
	for i := range objs {
		o := &objs[i]
		off, ok, err := p.find(o.h)
		if err == nil && !ok {
			err = errors.New("not in its index")
		}
		if err == nil && off != o.off {
			err = fmt.Errorf("indexed at %d, written at %d", off, o.off)
		}
		if err != nil {
			return fmt.Errorf("maintenance pack %s: object %s: %w", name, o.h, err)
		}
		t, data, err := d.readPackedAt(p, off, 0)
		if err != nil {
			return fmt.Errorf("maintenance pack %s: object %s: %w", name, o.h, err)
		}
		if t != o.t || !bytes.Equal(data, o.data) {
			return fmt.Errorf("maintenance pack %s: object %s reads back differently", name, o.h)
		}
	}
	return nil
}

// packLoose packs the store's loose objects into one new pack (see the top
// of this file) and removes the loose files of the objects it holds.
// Called with the maintenance lock held.
func (s *repo) packLoose(ctx context.Context) error {
	objects := filepath.Join(s.path, "objects")
	removeStaging(s.path) // left by a maintenance killed mid-roll-up, or by an earlier version
	removeOrphanPacks(filepath.Join(objects, "pack"), time.Now().Add(-maintenanceStaleAge))
	packDir := filepath.Join(objects, "pack")
	ids := listLoose(objects)
	small := listSmallPacks(packDir)
	if len(small) < 2 {
		small = nil // one small pack alone is left as it is
	}
	if len(ids) == 0 && len(small) == 0 {
		return nil
	}
	objs, err := readLooseObjects(ctx, objects, ids)
	if err != nil {
		return err
	}
	held := 0
	for i := range objs {
		objs[i].loose = true
		held += len(objs[i].data)
	}
	packed, used := readSmallPacks(ctx, objects, small, objs, maintainBudget-held)
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) == 0 && len(used) < 2 {
		return nil // one small pack read, the others not: nothing to gather
	}
	objs = append(objs, packed...)
	if len(objs) == 0 {
		return nil
	}
	ps := readPackSettings(s.path)
	if err := findDeltas(ctx, objs, ps.window, ps.depth); err != nil {
		return err
	}
	name, made, err := s.writeMaintPack(objs, ps.level)
	if err != nil {
		return err
	}
	if err := checkMaintPack(packDir, name, objs); err != nil {
		// The pack is not trusted: it goes, and every loose file and
		// small pack stays.
		if made {
			os.Remove(filepath.Join(packDir, name+".idx"))
			os.Remove(filepath.Join(packDir, name+".pack"))
		}
		return err
	}
	// The pack and its index are synced; the directory that now names them
	// must be too before any loose file goes: without this a power loss
	// after the unlinks below could keep the unlinks and lose the renames,
	// and with them the objects.
	if err := syncDir(packDir); err != nil {
		return err
	}
	s.mu.Lock()
	s.st.Reindex()
	s.mu.Unlock()
	if s.beforeUnpack != nil {
		s.beforeUnpack()
	}
	// The loose files go in two halves side by side (by first byte, so
	// the two never work in the same fan-out directory); unlinking is
	// most of the kernel's share of a pass.
	var wg sync.WaitGroup
	for half := 0; half < 2; half++ {
		wg.Go(func() { removePacked(objects, objs, byte(half*128), byte(half*128+127)) })
	}
	wg.Wait()
	// Then the small packs whose every object the new pack holds, as
	// rollUp removes what it rolled. The new pack may be one of them
	// written again, byte for byte (the same objects: an earlier pass's
	// pack, its objects loose too): it stays.
	removeReplacedPacks(packDir, name, used)
	return nil
}

// listSmallPacks lists the packs of fewer than packThreshold objects and
// smallPackBytes bytes that maintenance packs with the loose objects
// (packLoose): those a write of a few objects made (writeSmallPack), a
// small fetch's, a pass's over few loose objects. Packs with a .keep file are left out (listRollPacks), and
// so are a partial clone's (.promisor) and cruft packs (.mtimes, whose
// objects' times a plain pack would lose).
func listSmallPacks(packDir string) []string {
	packs, ok := listRollPacks(packDir)
	if !ok {
		return nil
	}
	var small []string
	for _, p := range packs {
		if p.count >= packThreshold {
			break // sorted by count
		}
		if fileExists(filepath.Join(packDir, p.name+".promisor")) || fileExists(filepath.Join(packDir, p.name+".mtimes")) {
			continue
		}
		// Few objects but many bytes (a large document's write, or a
		// pass's pack of such): left to the roll-ups, which copy it,
		// rather than inflated, searched and compressed again by every
		// pass until its pack holds packThreshold objects.
		if fi, err := os.Lstat(filepath.Join(packDir, p.name+".pack")); err != nil || fi.Size() >= smallPackBytes {
			continue
		}
		small = append(small, p.name)
	}
	return small
}

// readSmallPacks reads every object of the packs names (listSmallPacks),
// each checked against its id, leaving out those already in have, until
// budget bytes of content are held. A pack is taken whole or not at all:
// one of its objects that cannot be read or does not hash to its id
// leaves the pack out (it stays, for verify and git fsck to report). It
// returns the objects read and the packs they came from.
func readSmallPacks(ctx context.Context, objects string, names []string, have []packObj, budget int) (objs []packObj, used []string) {
	if len(names) == 0 {
		return nil, nil
	}
	seen := make(map[plumbing.Hash]bool, len(have))
	for i := range have {
		seen[have[i].h] = true
	}
	packDir := filepath.Join(objects, "pack")
	d := newODB(objects) // a private reader: s.st is the repo's, under s.mu
	defer d.Close()
	held := 0
	for _, name := range names {
		if held >= budget || ctx.Err() != nil {
			break
		}
		got, ok := readPackObjects(d, packDir, name, seen)
		if !ok {
			continue
		}
		for i := range got {
			seen[got[i].h] = true
			held += len(got[i].data)
		}
		objs = append(objs, got...)
		used = append(used, name)
	}
	return objs, used
}

// readPackObjects reads every object of the pack name through d, each
// checked against its id, leaving out those in skip. ok is false when one
// cannot be read or does not hash to its id.
func readPackObjects(d *odb, packDir, name string, skip map[plumbing.Hash]bool) (objs []packObj, ok bool) {
	p, err := openPackIndex(packDir, name)
	if err != nil {
		return nil, false
	}
	defer func() {
		d.cache.dropPack(p)
		p.close()
	}()
	objs = make([]packObj, 0, p.count)
	for i := 0; i < p.count; i++ {
		var h plumbing.Hash
		copy(h[:], p.idAt(i))
		if skip[h] {
			continue
		}
		off, err := p.offsetOf(i)
		if err != nil {
			return nil, false
		}
		t, data, err := d.readPackedAt(p, off, 0)
		if err != nil || objectHash(t, data) != h {
			return nil, false
		}
		objs = append(objs, packObj{h: h, t: t, data: data, base: -1})
	}
	return objs, true
}

// removePacked removes the loose files of the objects of objs whose first
// byte is in [lo, hi], then the fan-out directories left empty, as git
// prune-packed does (an empty directory takes a block of disk); a writer
// that loses the race re-creates its directory and retries (writeLoose).
// rmdir fails on a directory that is not empty.
func removePacked(objects string, objs []packObj, lo, hi byte) {
	var emptied [256]bool
	path := loosePathBuf(objects)
	for i := range objs {
		h := objs[i].h
		if !objs[i].loose || h[0] < lo || h[0] > hi {
			continue
		}
		setLooseID(path, len(objects), h)
		os.Remove(string(path))
		emptied[h[0]] = true
	}
	for b, e := range emptied {
		if e {
			os.Remove(filepath.Join(objects, hex.EncodeToString([]byte{byte(b)})))
		}
	}
}

// loosePathBuf is a loose object's path under objects, for setLooseID to
// fill in with each id in turn.
func loosePathBuf(objects string) []byte {
	return []byte(objects + "/00/" + strings.Repeat("0", 38))
}

// setLooseID makes path (from loosePathBuf, n the length of objects) the
// loose path of h.
func setLooseID(path []byte, n int, h plumbing.Hash) {
	hex.Encode(path[n+1:n+3], h[:1])
	hex.Encode(path[n+4:], h[1:])
}

// removeOrphanPacks removes from packDir the halves of packs a killed
// process left, last changed before cutoff: a .pack with no .idx (killed
// between renaming a new pack into place and its index; git and readproof
// read no pack without its index, so none of its objects is readable) and
// an .idx with no .pack (killed between removing a rolled-up pack and its
// index, git's order; its objects are in the pack that replaced it). A
// writer publishing a pack renames the index within moments of the pack,
// so only halves older than cutoff go.
func removeOrphanPacks(packDir string, cutoff time.Time) {
	entries, err := readDir(packDir)
	if err != nil {
		return
	}
	removeOrphansListed(packDir, entries, cutoff)
}

// mayExist reports whether path is there, or might be: only a lookup that
// finds nothing says it is not.
func mayExist(path string) bool {
	_, err := os.Lstat(path)
	return !errors.Is(err, os.ErrNotExist)
}

// removeOrphansListed is removeOrphanPacks on the listing entries of
// packDir. The listing is a moment's: a writer installs a pack by renaming
// its .pack and then its .idx into place, and a .pack whose index-pack ran
// longer than the cutoff keeps its old time, so a half the listing shows
// alone is looked for again, with its other half and .keep, right before
// it is removed.
func removeOrphansListed(packDir string, entries []os.DirEntry, cutoff time.Time) {
	have := make(map[string]bool, len(entries))
	for _, e := range entries {
		have[e.Name()] = true
	}
	for _, e := range entries {
		n := e.Name()
		base, ext, ok := strings.Cut(n, ".")
		if !ok || !strings.HasPrefix(base, "pack-") || len(base) != 45 {
			continue
		}
		other := map[string]string{"pack": ".idx", "idx": ".pack"}[ext]
		if other == "" || have[base+other] || have[base+".keep"] {
			continue
		}
		if fi, err := e.Info(); err == nil && fi.ModTime().Before(cutoff) &&
			!mayExist(filepath.Join(packDir, base+other)) && !mayExist(filepath.Join(packDir, base+".keep")) {
			os.Remove(filepath.Join(packDir, n))
		}
	}
}

// errConcat is a roll-up concatPacks does not do (an index of version 1,
// an object in two of the packs, a pack of a partial clone or a cruft
// pack, an entry whose bytes do not match its index's CRC): git's
// pack-objects --stdin-packs does it instead (rollUp).
var errConcat = errors.New("packs not concatenated")

// concatPacks writes the packs rolled as one pack: their entries copied
// byte for byte, pack after pack, each checked against the CRC its index
// records, with their indexes merged. Deltas by offset stay valid, since
// a pack's entries keep their distances from one another; deltas by id
// name objects that stay in the store. Nothing is compressed or searched
// again: each object is copied, not rewritten (so objects stored whole in
// different packs stay whole; gc deltifies them). It returns the new
// pack's name and whether it made it, as writeMaintPack does.
func (s *repo) concatPacks(ctx context.Context, packDir string, rolled []rollPack) (name string, made bool, err error) {
	var packs []*packFile
	defer func() {
		for _, p := range packs {
			p.close()
		}
	}()
	total := 0
	for _, rp := range rolled {
		for _, ext := range []string{".promisor", ".mtimes"} {
			if fileExists(filepath.Join(packDir, rp.name+ext)) {
				return "", false, errConcat
			}
		}
		p, err := openPackIndex(packDir, rp.name)
		if err != nil {
			return "", false, err
		}
		packs = append(packs, p)
		if p.version != 2 {
			return "", false, errConcat
		}
		if err := p.openPack(); err != nil {
			return "", false, err
		}
		total += p.count
	}
	if total >= 1<<32 {
		return "", false, errConcat
	}
	// Each pack's entries, read from its index, in the order of their
	// offsets; an object in two of the packs (which one index cannot list
	// twice) stops the roll-up before anything is written.
	entries := make([]indexEntry, 0, total)
	ranges := make([]int, 0, len(packs)+1)
	ids := make([]plumbing.Hash, 0, total)
	for _, p := range packs {
		ranges = append(ranges, len(entries))
		names, crcs := idxHeader+fanout, idxHeader+fanout+p.count*20
		for i := 0; i < p.count; i++ {
			var e indexEntry
			copy(e.h[:], p.idx[names+i*20:])
			e.crc = binary.BigEndian.Uint32(p.idx[crcs+i*4:])
			off, err := p.offsetOf(i)
			if err != nil {
				return "", false, err
			}
			e.off = uint64(off)
			entries = append(entries, e)
			ids = append(ids, e.h)
		}
		mine := entries[ranges[len(ranges)-1]:]
		sort.Slice(mine, func(i, j int) bool { return mine[i].off < mine[j].off })
	}
	ranges = append(ranges, len(entries))
	slices.SortFunc(ids, func(a, b plumbing.Hash) int { return bytes.Compare(a[:], b[:]) })
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			return "", false, errConcat
		}
	}
	po, err := s.newPackOut(packDir, total)
	if err != nil {
		return "", false, err
	}
	defer os.Remove(po.tmp.Name()) // a no-op once renamed
	tmp, w := po.tmp, po.w
	at := int64(packHdrLen)
	buf := make([]byte, 64<<10)
	fail := func(err error) (string, bool, error) {
		tmp.Close()
		return "", false, err
	}
	for k, p := range packs {
		if ctx.Err() != nil {
			return fail(ctx.Err())
		}
		mine := entries[ranges[k]:ranges[k+1]]
		end := uint64(p.packSize - 20)
		if len(mine) == 0 && end != 12 {
			return fail(errConcat) // bytes no entry covers
		}
		for i := range mine {
			e := &mine[i]
			next := end
			if i+1 < len(mine) {
				next = mine[i+1].off
			}
			if e.off < 12 || next <= e.off || next > end || (i == 0 && e.off != 12) {
				return fail(errConcat) // entries that do not tile the pack
			}
			crc := uint32(0)
			for o := e.off; o < next; {
				n := min(uint64(len(buf)), next-o)
				if _, err := p.pack.ReadAt(buf[:n], int64(o)); err != nil {
					return fail(err)
				}
				crc = crc32.Update(crc, crc32.IEEETable, buf[:n])
				if _, err := w.Write(buf[:n]); err != nil {
					return fail(err)
				}
				o += n
			}
			if crc != e.crc {
				return fail(errConcat)
			}
			e.off = e.off - 12 + uint64(at)
		}
		at += int64(end - 12)
	}
	packSum, err := po.finish(s.perm.object())
	if err != nil {
		return "", false, err
	}
	return s.placePack(packDir, tmp.Name(), packSum, entries)
}

// packHdrLen is the length of a pack's header: "PACK", the version and
// the number of entries.
const packHdrLen = 12

// packOut is a pack being written to a temporary file in the pack
// directory: its header written, its checksum taken as it is written.
type packOut struct {
	tmp *os.File
	sum hash.Hash
	w   *bufio.Writer
}

// newPackOut creates the temporary file of a version 2 pack of count
// entries in dir and writes its header. The caller removes the file if it
// is not renamed into place.
func (s *repo) newPackOut(dir string, count int) (*packOut, error) {
	tmp, err := s.createTemp(dir, "tmp_pack_")
	if err != nil {
		return nil, err
	}
	sum := sha1.New()
	po := &packOut{tmp: tmp, sum: sum, w: bufio.NewWriterSize(io.MultiWriter(tmpWriter(tmp), sum), 256<<10)}
	hdr := packFileHeader(count)
	po.w.Write(hdr[:]) // an error stays in w and is returned by finish
	return po, nil
}

// packFileHeader is the header of a version 2 pack of count entries.
func packFileHeader(count int) [packHdrLen]byte {
	var hdr [packHdrLen]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	binary.BigEndian.PutUint32(hdr[8:], uint32(count))
	return hdr
}

// finish writes what is buffered and the pack's checksum, then syncs and
// closes the file (closing it on an error too), and returns the checksum.
func (po *packOut) finish(perm os.FileMode) ([]byte, error) {
	if err := po.w.Flush(); err != nil {
		po.tmp.Close()
		return nil, err
	}
	packSum := po.sum.Sum(nil)
	if _, err := tmpWriter(po.tmp).Write(packSum); err != nil {
		po.tmp.Close()
		return nil, err
	}
	if err := closeTemp(po.tmp, perm, true); err != nil {
		return nil, err
	}
	return packSum, nil
}
