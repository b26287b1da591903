package gitstore

// The incremental step of automatic maintenance (maintain.go): the loose
// objects are packed by one `git pack-objects` fed exactly their ids, and
// git reads them from a staging pack this process writes, not from the
// loose files.
//
// Why: stock git reads a loose object through several open/mmap/inflate
// cycles (to list it, to learn its type and size, for the delta search and
// to write it), which cost about 0.1 ms of system time an object, more than
// the delta search itself; git repack then walks and empties every fan-out
// directory. Here each loose file is read once, its id checked against its
// content, and its bytes copied, stored uncompressed, into a pack in a
// private directory that git is given as an alternate object directory
// (GIT_ALTERNATE_OBJECT_DIRECTORIES): git finds the objects there before
// it looks for loose files. --no-reuse-object makes git compress every
// object itself and search deltas among all of them (a pack's own
// non-delta objects are otherwise never tried against each other), so the
// new pack is as small as git repack makes it. The staging pack is never
// part of the store: readers never see it and removing it is always safe.

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
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
)

// stagingPrefix names the private directories the staging packs are
// written in, inside the git directory. One left by a killed maintenance
// is removed by the next one (which holds the maintenance lock, so no
// other maintenance can be using it).
const stagingPrefix = "readproof-maint-"

// listLoose returns the ids of the loose objects under objects/, reading
// the 256 fan-out directories (entries that are not an object id are
// skipped, as git does).
func listLoose(objects string) []plumbing.Hash {
	var ids []plumbing.Hash
	name := []byte("00")
	for i := 0; i < 256; i++ {
		hex.Encode(name, []byte{byte(i)})
		f, err := os.Open(filepath.Join(objects, string(name)))
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			if len(n) != 38 {
				continue
			}
			var h plumbing.Hash
			if _, err := hex.Decode(h[:1], name); err != nil {
				continue
			}
			if _, err := hex.Decode(h[1:], []byte(n)); err != nil {
				continue
			}
			ids = append(ids, h)
		}
	}
	return ids
}

// stagedEntry is one object of a staging pack.
type stagedEntry struct {
	h   plumbing.Hash
	off uint64
	crc uint32
}

// stageLoose writes the loose objects ids into one pack (and its version 2
// index) under dir/pack, each object stored uncompressed. A loose object
// that cannot be read, or whose content does not hash to its id, is left
// out (and so stays loose, for verify and git fsck to report). It returns
// the ids staged.
func stageLoose(objects, dir string, ids []plumbing.Hash) ([]plumbing.Hash, error) {
	if err := os.MkdirAll(filepath.Join(dir, "pack"), 0o700); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(filepath.Join(dir, "pack"), "tmp_pack_")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 256<<10)
	var hdr [12]byte
	copy(hdr[:], "PACK")
	binary.BigEndian.PutUint32(hdr[4:], 2)
	w.Write(hdr[:]) // the count is written once known
	off := uint64(len(hdr))

	var (
		entries []stagedEntry
		entry   bytes.Buffer
		zr      io.ReadCloser
		br      = bufio.NewReaderSize(nil, 32<<10)
		zw, _   = zlib.NewWriterLevel(nil, zlib.NoCompression)
		sum     = sha1.New()
		path    = []byte(objects + "/00/" + strings.Repeat("0", 38))
	)
	for _, h := range ids {
		hexID := h.String()
		copy(path[len(objects)+1:], hexID[:2])
		copy(path[len(objects)+4:], hexID[2:])
		entry.Reset()
		if !stageOne(string(path), h, &entry, &zr, br, zw, sum) {
			continue
		}
		entries = append(entries, stagedEntry{h: h, off: off, crc: crc32.ChecksumIEEE(entry.Bytes())})
		off += uint64(entry.Len())
		if _, err := w.Write(entry.Bytes()); err != nil {
			return nil, err
		}
	}
	if zr != nil {
		zr.Close()
	}
	if len(entries) == 0 {
		os.Remove(f.Name())
		return nil, nil
	}
	if err := w.Flush(); err != nil {
		return nil, err
	}
	binary.BigEndian.PutUint32(hdr[8:], uint32(len(entries)))
	if _, err := f.WriteAt(hdr[:], 0); err != nil {
		return nil, err
	}
	sum.Reset()
	if _, err := io.Copy(sum, io.NewSectionReader(f, 0, int64(off))); err != nil {
		return nil, err
	}
	packSum := sum.Sum(nil)
	if _, err := f.WriteAt(packSum, int64(off)); err != nil {
		return nil, err
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	base := filepath.Join(dir, "pack", "pack-"+hex.EncodeToString(packSum))
	if err := os.Rename(f.Name(), base+".pack"); err != nil {
		return nil, err
	}
	if err := os.WriteFile(base+".idx", encodeIndex(entries, packSum), 0o600); err != nil {
		return nil, err
	}
	staged := make([]plumbing.Hash, len(entries))
	for i, e := range entries {
		staged[i] = e.h
	}
	return staged, nil
}

// stageOne appends to entry the pack entry of the loose object at path:
// its header, then its content in an uncompressed zlib stream. It reports
// false when the file cannot be read or is not the object h.
func stageOne(path string, h plumbing.Hash, entry *bytes.Buffer, zr *io.ReadCloser, br *bufio.Reader, zw *zlib.Writer, sum interface {
	io.Writer
	Sum([]byte) []byte
	Reset()
}) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	if *zr == nil {
		if *zr, err = zlib.NewReader(f); err != nil {
			*zr = nil
			return false
		}
	} else if err := (*zr).(zlib.Resetter).Reset(f, nil); err != nil {
		return false
	}
	br.Reset(*zr)
	head, err := br.ReadString(0)
	if err != nil {
		return false
	}
	typ, sizeStr, ok := strings.Cut(head[:len(head)-1], " ")
	size, serr := strconv.ParseInt(sizeStr, 10, 64)
	t, terr := plumbing.ParseObjectType(typ)
	if !ok || serr != nil || size < 0 || terr != nil || !t.Valid() || t == plumbing.OFSDeltaObject || t == plumbing.REFDeltaObject {
		return false
	}
	sum.Reset()
	io.WriteString(sum, head)
	entry.Write(packHeader(t, int(size)))
	zw.Reset(entry)
	n, err := io.Copy(io.MultiWriter(zw, sum), io.LimitReader(br, size))
	if err != nil || n != size || zw.Close() != nil {
		return false
	}
	if _, err := br.ReadByte(); err != io.EOF {
		return false // longer than its header says
	}
	var got plumbing.Hash
	copy(got[:], sum.Sum(nil))
	return got == h
}

// encodeIndex encodes a version 2 pack index of entries (sorted here).
func encodeIndex(entries []stagedEntry, packSum []byte) []byte {
	sort.Slice(entries, func(i, j int) bool { return bytes.Compare(entries[i].h[:], entries[j].h[:]) < 0 })
	var idx bytes.Buffer
	idx.Write([]byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
	var fan [256]uint32
	for _, e := range entries {
		fan[e.h[0]]++
	}
	var total uint32
	var b [8]byte
	for _, v := range fan {
		total += v
		binary.BigEndian.PutUint32(b[:4], total)
		idx.Write(b[:4])
	}
	for _, e := range entries {
		idx.Write(e.h[:])
	}
	for _, e := range entries {
		binary.BigEndian.PutUint32(b[:4], e.crc)
		idx.Write(b[:4])
	}
	var large []uint64
	for _, e := range entries {
		v := uint32(e.off)
		if e.off >= 1<<31 {
			v = 1<<31 | uint32(len(large))
			large = append(large, e.off)
		}
		binary.BigEndian.PutUint32(b[:4], v)
		idx.Write(b[:4])
	}
	for _, v := range large {
		binary.BigEndian.PutUint64(b[:], v)
		idx.Write(b[:])
	}
	idx.Write(packSum)
	s := sha1.Sum(idx.Bytes())
	idx.Write(s[:])
	return idx.Bytes()
}

// packLoose packs the store's loose objects into one new delta-compressed
// pack (see the top of this file) and removes the loose files of the
// objects the new pack holds. Called with the maintenance lock held.
func (s *repo) packLoose(ctx context.Context, git string) error {
	objects := filepath.Join(s.path, "objects")
	removeStaging(s.path)
	ids := listLoose(objects)
	if len(ids) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp(s.path, stagingPrefix)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	staged, err := stageLoose(objects, dir, ids)
	if err != nil || len(staged) == 0 {
		return err
	}
	var in bytes.Buffer
	in.Grow(len(staged) * 41)
	for _, h := range staged {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	out, err := runGitWith(ctx, git, s.path, "pack-objects", &in, []string{"GIT_ALTERNATE_OBJECT_DIRECTORIES=" + quoteAlternate(dir)},
		"-c", "gc.auto=0", "pack-objects", "--no-reuse-object", "--delta-base-offset", "-q",
		filepath.Join(objects, "pack", "pack"))
	if err != nil {
		return err
	}
	name := strings.TrimSpace(string(out))
	if _, err := hex.DecodeString(name); err != nil || len(name) != 40 ||
		!fileExists(filepath.Join(objects, "pack", "pack-"+name+".idx")) {
		return fmt.Errorf("git pack-objects: no pack written (%q)", name)
	}
	// Only objects the store's own packs now hold lose their loose file.
	s.mu.Lock()
	s.st.Reindex()
	packed := make([]plumbing.Hash, 0, len(staged))
	for _, h := range staged {
		if _, _, ok, err := s.st.findPacked(h); ok && err == nil {
			packed = append(packed, h)
		}
	}
	s.mu.Unlock()
	if len(packed) != len(staged) {
		return errors.New("git pack-objects: the new pack lacks objects it was given")
	}
	emptied := map[byte]bool{}
	for _, h := range packed {
		hexID := h.String()
		os.Remove(filepath.Join(objects, hexID[:2], hexID[2:]))
		emptied[h[0]] = true
	}
	// As git prune-packed does: a fan-out directory left empty goes (it
	// takes a block of disk); a writer that loses the race re-creates it
	// and retries (writeLoose). rmdir fails on one that is not empty.
	for b := range emptied {
		os.Remove(filepath.Join(objects, hex.EncodeToString([]byte{b})))
	}
	return nil
}

// quoteAlternate writes dir as one entry of GIT_ALTERNATE_OBJECT_DIRECTORIES:
// as it is, or, when it holds the list separator or a quote, in double
// quotes with backslash escapes, which git unquotes (C style).
func quoteAlternate(dir string) string {
	if !strings.ContainsAny(dir, string(os.PathListSeparator)+`"\`) {
		return dir
	}
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(dir); i++ {
		if c := dir[i]; c == '"' || c == '\\' {
			b.WriteByte('\\')
		}
		b.WriteByte(dir[i])
	}
	b.WriteByte('"')
	return b.String()
}

// removeStaging removes staging directories a killed maintenance left.
func removeStaging(gitDir string) {
	entries, err := os.ReadDir(gitDir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() && strings.HasPrefix(e.Name(), stagingPrefix) {
			os.RemoveAll(filepath.Join(gitDir, e.Name()))
		}
	}
}

// needsRollup reports whether the store's packs break the geometric
// progression git repack --geometric=2 keeps (sorted by object count, each
// pack at least twice the one before it), read from the headers of the
// .idx files (version 2, or version 1 which has no header); packs with a
// .keep file are not counted, as git does not roll them up.
func needsRollup(packDir string) bool {
	entries, err := os.ReadDir(packDir)
	if err != nil {
		return false
	}
	var counts []uint32
	for _, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		base := strings.TrimSuffix(n, ".idx")
		if fileExists(filepath.Join(packDir, base+".keep")) {
			continue
		}
		c, ok := idxObjectCount(filepath.Join(packDir, n))
		if !ok {
			return true // let git decide
		}
		counts = append(counts, c)
	}
	sort.Slice(counts, func(i, j int) bool { return counts[i] < counts[j] })
	for i := 1; i < len(counts); i++ {
		if uint64(counts[i]) < 2*uint64(counts[i-1]) {
			return true
		}
	}
	return false
}

// idxObjectCount reads the number of objects of a pack index: the last
// fan-out entry.
func idxObjectCount(path string) (uint32, bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var b [8 + 256*4]byte
	if _, err := io.ReadFull(f, b[:]); err != nil {
		return 0, false
	}
	if bytes.Equal(b[:4], []byte{0xff, 't', 'O', 'c'}) {
		return binary.BigEndian.Uint32(b[8+255*4:]), true
	}
	return binary.BigEndian.Uint32(b[255*4:]), true
}
