package gitstore

// The incremental step of automatic maintenance (maintain.go): the loose
// objects are packed by one `git pack-objects` fed exactly their ids, and
// git reads them from a staging pack this process writes, not from the
// loose files.
//
// Why: stock git reads a loose object through several open/mmap/inflate
// cycles (to list it, to learn its type and size, for the delta search and
// to write it), which cost about 0.1 ms of system time an object, more than
// the delta search itself. Here each loose file is read once, its id
// checked against its content, and its bytes copied, stored uncompressed,
// into a pack in a private directory laid out as a bare repository (HEAD,
// refs/, objects/pack/, and a copy of the store's config so pack.*,
// core.compression and core.sharedRepository still apply). git runs in
// that repository and writes its pack straight into the store's
// objects/pack: it finds every object in the staging pack, and it does not
// read the store's refs (pack-objects reads every tag to order what it
// writes, and each run is a tag: a file each until refs are packed).
// --no-reuse-object makes git compress every object itself and search
// deltas among all of them (a pack's own non-delta objects are otherwise
// never tried against each other), so the new pack is as small as git
// repack makes it. The staging repository is never part of the store:
// readers never see it and removing it is always safe.

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
// skipped, as git does). Only the directories a listing of objects/ shows
// are opened (a packed store has few).
func listLoose(objects string) []plumbing.Hash {
	var ids []plumbing.Hash
	fan := looseFanout(objects)
	name := []byte("00")
	for i := 0; i < 256; i++ {
		if fan != nil && !fan[i] {
			continue
		}
		hex.Encode(name, []byte{byte(i)})
		f, err := openRead(filepath.Join(objects, string(name)))
		if err != nil {
			continue
		}
		names, _ := f.Readdirnames(-1)
		f.Close()
		for _, n := range names {
			if len(n) != 38 {
				continue
			}
			h := plumbing.Hash{byte(i)}
			if _, err := hex.Decode(h[1:], []byte(n)); err != nil {
				continue
			}
			ids = append(ids, h)
		}
	}
	return ids
}

// stageLoose writes the loose objects ids into one pack (and its version 2
// index) under dir/pack, each object stored uncompressed. A loose object
// that cannot be read, or whose content does not hash to its id, is left
// out (and so stays loose, for verify and git fsck to report). It returns
// the ids staged.
func stageLoose(objects, dir string, ids []plumbing.Hash) ([]plumbing.Hash, error) {
	f, err := os.CreateTemp(filepath.Join(dir, "pack"), "tmp_stage_")
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
		entries []indexEntry
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
		entries = append(entries, indexEntry{h: h, off: off, crc: crc32.ChecksumIEEE(entry.Bytes())})
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
func stageOne(path string, h plumbing.Hash, entry *bytes.Buffer, zr *io.ReadCloser, br *bufio.Reader, zw *zlib.Writer, sum hash.Hash) bool {
	f, err := openRead(path)
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
	dir, err := newStaging(s.path)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	staged, err := stageLoose(objects, filepath.Join(dir, "objects"), ids)
	if err != nil || len(staged) == 0 {
		return err
	}
	var in bytes.Buffer
	in.Grow(len(staged) * 41)
	for _, h := range staged {
		in.WriteString(h.String())
		in.WriteByte('\n')
	}
	// git creates its temporary files in the staging repository and
	// renames them into the store (the same file system): the pack, then
	// its index, each synced first as git syncs packs.
	out, err := runGitWith(ctx, git, dir, "pack-objects", &in,
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
	// git synced the pack and its index but not the directory that now
	// names them: without this a power loss after the unlinks below could
	// keep the unlinks and lose the renames, and with them the objects.
	if err := syncDir(filepath.Join(objects, "pack")); err != nil {
		return err
	}
	if s.beforeUnpack != nil {
		s.beforeUnpack()
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

// newStaging makes a private staging directory inside the git directory,
// laid out as a bare repository git accepts (HEAD, refs/, objects/pack/)
// with a copy of the store's config. The caller removes it; on an error
// nothing is left.
func newStaging(gitDir string) (string, error) {
	dir, err := os.MkdirTemp(gitDir, stagingPrefix)
	if err != nil {
		return "", err
	}
	if err := stagingRepo(gitDir, dir); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// stagingRepo lays dir out as a bare repository git accepts (HEAD, refs/,
// objects/pack/) with a copy of the store's config.
func stagingRepo(gitDir, dir string) error {
	for _, d := range []string{"refs", filepath.Join("objects", "pack")} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte("ref: refs/heads/main\n"), 0o600); err != nil {
		return err
	}
	cfg, err := os.ReadFile(filepath.Join(gitDir, "config"))
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "config"), cfg, 0o600)
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

// rollPack is a pack a roll-up may take: its name ("pack-<checksum>") and
// object count.
type rollPack struct {
	name  string
	count uint32
}

// listRollPacks lists the store's packs, fewest objects first, read from
// the headers of their .idx files; packs with a .keep file are left out,
// as git repack leaves them alone. ok is false when an index cannot be
// read.
func listRollPacks(packDir string) (packs []rollPack, ok bool) {
	entries, err := os.ReadDir(packDir)
	if err != nil {
		return nil, false
	}
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
			return nil, false
		}
		packs = append(packs, rollPack{base, c})
	}
	sort.Slice(packs, func(i, j int) bool { return packs[i].count < packs[j].count })
	return packs, true
}

// rollupSplit returns how many of the smallest packs (sorted as
// listRollPacks sorts them) git repack --geometric=2 would roll into one:
// every pack below the highest that holds fewer than twice the objects of
// the one before it, then as many of the next as hold fewer than twice
// the objects rolled so far (git 2.39's split_pack_geometry). 0: none.
func rollupSplit(packs []rollPack) int {
	i := len(packs) - 1
	for ; i > 0; i-- {
		if uint64(packs[i].count) < 2*uint64(packs[i-1].count) {
			break
		}
	}
	if i <= 0 {
		return 0
	}
	split := i + 1
	var total uint64
	for _, p := range packs[:split] {
		total += uint64(p.count)
	}
	for split < len(packs) && uint64(packs[split].count) < 2*total {
		total += uint64(packs[split].count)
		split++
	}
	return split
}

// rollUp rolls the smallest packs into one when they break the geometric
// progression, as git repack --geometric=2 -d does, but with git running
// in a staging repository (see the top of this file) whose alternate is
// the store's object directory, so it reads neither the store's refs nor
// its fan-out directories: git pack-objects --stdin-packs is given the
// packs to roll and, excluded, the others. It copies every object of the
// rolled packs that the others lack (deltas reused; objects stored whole
// in different packs are tried against each other) into a new pack in
// objects/pack. The rolled packs are removed only after every object they
// hold has been found in the new pack or in a pack that stays.
func (s *repo) rollUp(ctx context.Context, git string) error {
	packDir := filepath.Join(s.path, "objects", "pack")
	packs, ok := listRollPacks(packDir)
	objects := filepath.Join(s.path, "objects")
	if !ok || strings.ContainsAny(objects, "\n\"") {
		// an index this cannot read, or a path the alternates file cannot
		// hold as it is: stock git decides
		_, err := runGit(ctx, git, s.path, "repack", "-c", "gc.auto=0", "repack", "--geometric=2", "-d", "-l", "-n", "-q", "--no-write-bitmap-index")
		return err
	}
	split := rollupSplit(packs)
	if split < 2 {
		return nil
	}
	dir, err := newStaging(s.path)
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "objects", "info"), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
		return err
	}
	var in bytes.Buffer
	for i, p := range packs {
		if i >= split {
			in.WriteByte('^')
		}
		in.WriteString(p.name + ".pack\n")
	}
	out, err := runGitWith(ctx, git, dir, "pack-objects", &in,
		"-c", "gc.auto=0", "pack-objects", "--stdin-packs", "--delta-base-offset", "-q", filepath.Join(packDir, "pack"))
	if err != nil {
		return err
	}
	name := "pack-" + strings.TrimSpace(string(out))
	if len(name) != 45 || !fileExists(filepath.Join(packDir, name+".idx")) {
		return fmt.Errorf("git pack-objects --stdin-packs: no pack written (%q)", out)
	}
	// Every object of the rolled packs must be in the new pack or in one
	// that stays before any rolled pack goes.
	keep := []string{name}
	for _, p := range packs[split:] {
		keep = append(keep, p.name)
	}
	var survivors []*packFile
	defer func() {
		for _, p := range survivors {
			p.close()
		}
	}()
	for _, n := range keep {
		p, err := openPackIndex(packDir, n)
		if err != nil {
			return err
		}
		survivors = append(survivors, p)
	}
	for _, rp := range packs[:split] {
		if rp.name == name {
			continue
		}
		if err := allFound(packDir, rp.name, survivors); err != nil {
			return err
		}
	}
	// The rolled-up pack's name must be durable before the packs it
	// replaces lose theirs (see packLoose).
	if err := syncDir(packDir); err != nil {
		return err
	}
	for _, rp := range packs[:split] {
		if rp.name == name || fileExists(filepath.Join(packDir, rp.name+".keep")) {
			continue
		}
		// git's order (unlink_pack_path): the pack, then its index and the
		// rest; a reader that still lists it finds the object again in the
		// new pack (afterMiss).
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".promisor", ".mtimes"} {
			os.Remove(filepath.Join(packDir, rp.name+ext))
		}
	}
	return nil
}

// allFound checks that every object of the pack index name is found in
// one of packs.
func allFound(packDir, name string, packs []*packFile) error {
	p, err := openPackIndex(packDir, name)
	if err != nil {
		return err
	}
	defer p.close()
	names, stride := idxHeader+fanout, 20
	if p.version == 1 {
		names, stride = fanout+4, 24
	}
	var h plumbing.Hash
	for i := 0; i < p.count; i++ {
		copy(h[:], p.idx[names+i*stride:])
		found := false
		for _, q := range packs {
			if _, ok, err := q.find(h); ok && err == nil {
				found = true
				break
			}
		}
		if !found {
			return fmt.Errorf("roll-up: %s of %s is in no pack that stays; nothing removed", h, name)
		}
	}
	return nil
}

// idxObjectCount reads the number of objects of a pack index: the last
// fan-out entry.
func idxObjectCount(path string) (uint32, bool) {
	f, err := openRead(path)
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
