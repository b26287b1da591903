package gitstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// packedWith writes n blobs and packs them (the store's loose objects) with
// packLoose, returning the blobs.
func packedWith(t *testing.T, s *repo, tag string, n int) []OID {
	t.Helper()
	var ids []OID
	for i := 0; i < n; i++ {
		ids = append(ids, putBlob(t, s, fmt.Sprintf("%s %d\n%s", tag, i, strings.Repeat("shared line\n", 20))))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := s.packLoose(context.Background()); err != nil {
		t.Fatal(err)
	}
	return ids
}

// A roll-up by concatenation keeps every object and its bytes, and the
// pack it writes is one git reads and checks (verify-pack recomputes each
// entry's CRC and the pack's checksum).
func TestConcatPacksSameObjects(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	// each of at least packThreshold objects: a smaller pack would be
	// packed again with the next loose objects (listSmallPacks)
	packedWith(t, s, "a", 70)
	packedWith(t, s, "b", 80)
	packedWith(t, s, "c", 160)
	packDir := filepath.Join(s.path, "objects", "pack")
	packs, ok := listRollPacks(packDir)
	if !ok || len(packs) != 3 {
		t.Fatalf("packs: %v", packs)
	}
	before := allObjects(t, s.path)
	name, made, err := s.concatPacks(context.Background(), packDir, packs)
	if err != nil || !made {
		t.Fatalf("concatPacks: %q %v %v", name, made, err)
	}
	git(t, s.path, "verify-pack", filepath.Join(packDir, name+".idx"))
	for _, p := range packs {
		for _, ext := range []string{".pack", ".idx"} {
			os.Remove(filepath.Join(packDir, p.name+ext))
		}
	}
	if after := allObjects(t, s.path); !bytes.Equal(before, after) {
		t.Error("the objects read differently from the concatenated pack")
	}
	Fsck(t, s.path)
}

// What concatenation cannot do it refuses, leaving nothing behind, and
// rollUp has git do it: an object in two of the packs (which one index
// cannot list twice), and an entry whose bytes do not match its CRC.
func TestConcatPacksRefuses(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	ids := packedWith(t, s, "a", 30)
	// a second pack holding one of the first's objects and new ones
	more := packedWith(t, s, "b", 20)
	cmd := GitCommand(t, s.path, "pack-objects", "-q", filepath.Join(s.path, "objects", "pack", "pack"))
	cmd.Stdin = strings.NewReader(string(ids[0]) + "\n" + string(more[0]) + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	packDir := filepath.Join(s.path, "objects", "pack")
	packs, _ := listRollPacks(packDir)
	if len(packs) != 3 {
		t.Fatalf("packs: %v", packs)
	}
	if _, _, err := s.concatPacks(context.Background(), packDir, packs); !errors.Is(err, errConcat) {
		t.Fatalf("concatenating packs that share objects: %v, want errConcat", err)
	}
	if m, _ := filepath.Glob(filepath.Join(packDir, "tmp_*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
	before := allObjects(t, s.path)
	if err := s.rollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, n := looseAndPacks(t, s.path); n >= 3 {
		t.Errorf("%d packs after the roll-up git did", n)
	}
	if after := allObjects(t, s.path); !bytes.Equal(before, after) {
		t.Error("the objects read differently after the roll-up git did")
	}
	Fsck(t, s.path)

	// One flipped byte in an entry: its CRC no longer matches.
	s2 := maintenanceOff(t)
	packedWith(t, s2, "a", 30)
	packedWith(t, s2, "b", 20)
	packDir = filepath.Join(s2.path, "objects", "pack")
	packs, _ = listRollPacks(packDir)
	pf := filepath.Join(packDir, packs[0].name+".pack")
	data, err := os.ReadFile(pf)
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(pf, 0o600)
	data[len(data)/2] ^= 0x40
	if err := os.WriteFile(pf, data, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s2.concatPacks(context.Background(), packDir, packs); !errors.Is(err, errConcat) {
		t.Fatalf("concatenating a damaged pack: %v, want errConcat", err)
	}
	if m, _ := filepath.Glob(filepath.Join(packDir, "tmp_*")); len(m) != 0 {
		t.Errorf("temporary files left: %v", m)
	}
}

// A maintenance pack that does not read back as what was written is
// refused: checkMaintPack compares every object with its source.
func TestCheckMaintPackRefusesDifference(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	for i := 0; i < 10; i++ {
		putBlob(t, s, fmt.Sprintf("object %d\n%s", i, strings.Repeat("text\n", 30)))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	objects := filepath.Join(s.path, "objects")
	objs, err := readLooseObjects(context.Background(), objects, listLoose(objects))
	if err != nil || len(objs) != 10 {
		t.Fatalf("read %d loose objects: %v", len(objs), err)
	}
	if err := findDeltas(context.Background(), objs, 10, 50); err != nil {
		t.Fatal(err)
	}
	name, _, err := s.writeMaintPack(objs, 1)
	if err != nil {
		t.Fatal(err)
	}
	packDir := filepath.Join(objects, "pack")
	if err := checkMaintPack(packDir, name, objs); err != nil {
		t.Fatalf("a sound pack: %v", err)
	}
	objs[3].data = append(bytes.Clone(objs[3].data), '!')
	if err := checkMaintPack(packDir, name, objs); err == nil {
		t.Fatal("a pack that reads back differently passed")
	}
}

// The pack a maintenance pass writes is about as small as the one git
// pack-objects writes of the same objects with the same window and depth:
// the delta search finds what git's finds.
func TestMaintPackSizeNearGit(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	doc := strings.Repeat("a line of a document that is recorded again and again\n", 80)
	var tip OID
	for i := 0; i < 40; i++ {
		text := fmt.Sprintf("edit %d\n%s", i, doc[:len(doc)-i*7]) // one line changes, the end shrinks
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		c := mkCommit(t, s, text, parents...)
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
		tip = c
	}
	objects := filepath.Join(s.path, "objects")
	ids := listLoose(objects)
	var in strings.Builder
	for _, h := range ids {
		in.WriteString(h.String() + "\n")
	}
	gitDir := t.TempDir()
	cmd := GitCommand(t, s.path, "pack-objects", "--no-reuse-object", "--window=10", "--depth=50", "-q", filepath.Join(gitDir, "pack"))
	cmd.Stdin = strings.NewReader(in.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	gitPacks, _ := filepath.Glob(filepath.Join(gitDir, "*.pack"))
	if len(gitPacks) != 1 {
		t.Fatalf("git wrote %v", gitPacks)
	}
	gi, _ := os.Stat(gitPacks[0])
	if err := s.packLoose(context.Background()); err != nil {
		t.Fatal(err)
	}
	ours, _ := filepath.Glob(filepath.Join(objects, "pack", "*.pack"))
	if len(ours) != 1 {
		t.Fatalf("maintenance wrote %v", ours)
	}
	oi, _ := os.Stat(ours[0])
	t.Logf("%d objects: git's pack %d bytes, maintenance's %d", len(ids), gi.Size(), oi.Size())
	if oi.Size() > gi.Size()*5/4 {
		t.Errorf("maintenance's pack is %d bytes, git's %d: more than 1.25x", oi.Size(), gi.Size())
	}
	Fsck(t, s.path)
}

// The half of a pack a killed process left (a .pack with no index, an
// index with no .pack) goes once it is old; a fresh one, which a writer
// may be publishing, and a whole pack stay.
func TestRemoveOrphanPacks(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	name := func(c byte) string { return "pack-" + strings.Repeat(string(c), 40) }
	files := map[string]bool{ // name: removed
		name('a') + ".pack": true, name('b') + ".idx": true, // old orphans
		name('c') + ".pack": false, name('c') + ".idx": false, // a whole pack
		name('d') + ".pack": false, name('d') + ".keep": false, // kept by .keep
		"tmp_pack_1": false, "pack-short.pack": false,
	}
	old := time.Now().Add(-2 * maintenanceStaleAge)
	for n := range files {
		p := filepath.Join(dir, n)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(p, old, old)
	}
	fresh := filepath.Join(dir, name('e')+".pack")
	os.WriteFile(fresh, []byte("x"), 0o600)
	files[name('e')+".pack"] = false
	removeOrphanPacks(dir, time.Now().Add(-maintenanceStaleAge))
	for n, gone := range files {
		if fileExists(filepath.Join(dir, n)) == gone {
			t.Errorf("%s: removed %v, want %v", n, !gone, gone)
		}
	}
}

// TestRemoveOrphanPacksLooksAgain: a .pack the listing showed alone, old (an
// index-pack that ran past the cutoff keeps its time), whose .idx a writer
// renamed into place after the listing, or that a .keep came to hold, is
// not removed: each half is looked for again right before the remove.
func TestRemoveOrphanPacksLooksAgain(t *testing.T) {
	t.Parallel()
	for _, late := range []string{".idx", ".keep"} {
		dir := t.TempDir()
		pack := filepath.Join(dir, "pack-"+strings.Repeat("f", 40))
		if err := os.WriteFile(pack+".pack", []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * maintenanceStaleAge)
		if err := os.Chtimes(pack+".pack", old, old); err != nil {
			t.Fatal(err)
		}
		listed, err := readDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(pack+late, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		removeOrphansListed(dir, listed, time.Now().Add(-maintenanceStaleAge))
		if !fileExists(pack + ".pack") {
			t.Errorf("a .pack whose %s appeared after the listing was removed", late)
		}
	}
}
