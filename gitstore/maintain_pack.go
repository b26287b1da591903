package gitstore

// Listing loose objects and rolling packs up, for automatic maintenance
// (maintain.go; the packing itself is maintain_write.go).
//
// A roll-up concatenates the packs it rolls (concatPacks): no git process,
// no object recompressed. What concatenation cannot do (an object in two
// of the packs, an index of version 1, an entry whose bytes do not match
// its CRC, a partial clone's or a cruft pack) is left to one `git
// pack-objects --stdin-packs` run in a private staging directory laid out
// as a bare repository (HEAD, refs/, objects/pack/, a copy of the store's
// config so pack.*, core.compression and core.sharedRepository still
// apply) whose alternate is the store's object directory: git reads
// neither the store's refs (pack-objects reads every tag to order what it
// writes, and each run is a tag: a file each until refs are packed) nor its
// fan-out directories, and writes its pack straight into the store's
// objects/pack. The staging repository is never part of the store:
// readers never see it and removing it is always safe.

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
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
		names, _ := readDirNames(filepath.Join(objects, string(name)))
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

// irregularLoose returns the id and mode of the first loose object under
// objects whose file is not a regular file (a symbolic link above all:
// readLooseFile refuses it); ok is false when there is none. It lists and
// stats every loose object, so it is asked only before handing the store's
// loose objects to git.
func irregularLoose(objects string) (id OID, mode os.FileMode, ok bool) {
	path := loosePathBuf(objects)
	for _, h := range listLoose(objects) {
		setLooseID(path, len(objects), h)
		if fi, err := os.Lstat(string(path)); err == nil && !fi.Mode().IsRegular() {
			return OID(h.String()), fi.Mode(), true
		}
	}
	return "", 0, false
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
// as git repack leaves them alone, and so are cruft packs (a .mtimes
// file: gc's pack of the unreachable objects it keeps), whose objects'
// times a rolled-up pack would lose, each then young again. ok is false
// when an index cannot be read.
func listRollPacks(packDir string) (packs []rollPack, ok bool) {
	entries, err := os.ReadDir(packDir)
	if err != nil {
		return nil, false
	}
	for i, e := range entries {
		n := e.Name()
		if !strings.HasPrefix(n, "pack-") || !strings.HasSuffix(n, ".idx") {
			continue
		}
		base := strings.TrimSuffix(n, ".idx")
		if !packListed(entries[i+1:], base) {
			continue // its pack removed by a killed pass (removeOrphanPacks removes it)
		}
		if fileExists(filepath.Join(packDir, base+".keep")) || fileExists(filepath.Join(packDir, base+".mtimes")) {
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
func (s *repo) rollUp(ctx context.Context) error {
	packDir := filepath.Join(s.path, "objects", "pack")
	packs, ok := listRollPacks(packDir)
	if !ok {
		return s.repackWithGit(ctx) // an index this cannot read
	}
	split := rollupSplit(packs)
	if split < 2 {
		return nil
	}
	name, _, err := s.concatPacks(ctx, packDir, packs[:split])
	if errors.Is(err, errConcat) {
		if strings.ContainsAny(s.path, "\n\"") {
			return s.repackWithGit(ctx) // a path the alternates file cannot hold as it is
		}
		name, err = s.rollUpWithGit(ctx, packs, split)
	}
	if err != nil {
		return err
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
	rolled := make([]string, split)
	for i, rp := range packs[:split] {
		rolled[i] = rp.name
	}
	removeReplacedPacks(packDir, name, rolled)
	return nil
}

// removeReplacedPacks removes the packs names (their base names in
// packDir) whose every object the pack kept now holds. kept itself stays
// (a pass may write a pack again byte for byte, under its own name), and
// so does a pack with a .keep file. Each goes in git's order
// (unlink_pack_path): the pack, then its index and the rest; a reader that
// still lists it finds the object again in the new pack (afterMiss).
func removeReplacedPacks(packDir, kept string, names []string) {
	for _, n := range names {
		if n == kept || fileExists(filepath.Join(packDir, n+".keep")) {
			continue
		}
		for _, ext := range []string{".pack", ".idx", ".rev", ".bitmap", ".promisor", ".mtimes"} {
			os.Remove(filepath.Join(packDir, n+ext))
		}
	}
}

// repackWithGit leaves the roll-up to stock git: git repack --geometric=2
// -d in the store. That packs the loose objects too, reading them as git
// does, through a symbolic link, and -d then removes their files: with a
// loose object's file that is not a regular file (damage verify reports,
// TestLooseObjectSymlink) it is not run, and the roll-up waits (before
// session 31's last re-read it packed the content a link led to under the
// object's id, whatever it hashed to, and removed the link).
func (s *repo) repackWithGit(ctx context.Context) error {
	if _, _, ok := irregularLoose(filepath.Join(s.path, "objects")); ok {
		return nil
	}
	git, err := findGit() // once per PATH, as the transport finds it
	if err != nil {
		return err
	}
	_, err = runGit(ctx, git, s.path, "repack", "-c", "gc.auto=0", "repack", "--geometric=2", "-d", "-l", "-n", "-q", "--no-write-bitmap-index")
	return err
}

// rollUpWithGit rolls packs[:split] up with git pack-objects --stdin-packs
// (what concatPacks does not do), run in a staging repository whose
// alternate is the store's object directory, so it reads neither the
// store's refs nor its fan-out directories; the others are excluded. It
// returns the new pack's name.
func (s *repo) rollUpWithGit(ctx context.Context, packs []rollPack, split int) (string, error) {
	git, err := findGit() // once per PATH, as the transport finds it
	if err != nil {
		return "", err
	}
	objects := filepath.Join(s.path, "objects")
	packDir := filepath.Join(objects, "pack")
	dir, err := newStaging(s.path)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	if err := os.MkdirAll(filepath.Join(dir, "objects", "info"), 0o700); err != nil {
		return "", err
	}
	if err := os.WriteFile(filepath.Join(dir, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
		return "", err
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
		return "", err
	}
	name := "pack-" + strings.TrimSpace(string(out))
	if len(name) != 45 || !fileExists(filepath.Join(packDir, name+".idx")) {
		return "", fmt.Errorf("git pack-objects --stdin-packs: no pack written (%q)", out)
	}
	return name, nil
}

// allFound checks that every object of the pack index name is found in
// one of packs.
func allFound(packDir, name string, packs []*packFile) error {
	p, err := openPackIndex(packDir, name)
	if err != nil {
		return err
	}
	defer p.close()
	var h plumbing.Hash
	for i := 0; i < p.count; i++ {
		copy(h[:], p.idAt(i))
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
