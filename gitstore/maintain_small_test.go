package gitstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	gitconfig "github.com/go-git/go-git/v5/plumbing/format/config"
)

// packNames lists the pack-*.pack files of a store.
func packNames(t *testing.T, dir string) []string {
	t.Helper()
	packs, err := filepath.Glob(filepath.Join(dir, "objects", "pack", "pack-*.pack"))
	if err != nil {
		t.Fatal(err)
	}
	return packs
}

// passOnlyByTest makes a store whose writes make small packs but start no
// maintenance pass (gc.autoPackLimit 1000): the test runs the pass.
func passOnlyByTest(t *testing.T) (*repo, string) {
	t.Helper()
	st := NewTestStore(t)
	dir := st.Path()
	st.Close()
	git(t, dir, "config", "gc.autoPackLimit", "1000")
	return reopen(t, dir).(*repo), dir
}

// smallWrite records one more commit on main: a fresh blob, tree and
// commit (writeSmallUpdates numbers its contents from 0 at every call).
func smallWrite(t *testing.T, s Store, i int) OID {
	t.Helper()
	tip, _ := s.Ref("refs/heads/main")
	var parents []OID
	if tip != "" {
		parents = []OID{tip}
	}
	c := mkCommit(t, s, fmt.Sprintf("write %d of %s", i, t.Name()), parents...)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
	return c
}

// A write of a few objects makes one small pack (two files) instead of a
// loose file an object, and once the store holds gc.autoPackLimit packs a
// write packs the small ones into one delta-compressed pack: the packs
// stay under the limit, nothing is loose, every commit reads, in a new
// process too, and git fsck finds the store sound. Before small packs,
// each such write left three loose files, which maintenance deleted
// again: on ext4 without a journal every later file creation scanned past
// those freed inodes (docs/scaling.md, session 18).
func TestSmallPacksMaintained(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	dir := s.Path()
	var commits []OID
	most, prev, passes := 0, 0, 0
	for i := 0; i < 3*DefaultAutoPackLimit; i++ {
		commits = append(commits, smallWrite(t, s, i))
		loose, packs := looseAndPacks(t, dir)
		if i == 0 && (loose != 0 || packs != 1) {
			t.Fatalf("a write of 3 objects left %d loose objects and %d packs; want 0 and 1", loose, packs)
		}
		if loose != 0 {
			t.Fatalf("write %d: %d loose objects", i, loose)
		}
		most = max(most, packs)
		if packs < prev { // a pass ran: the small packs are one now, and the packs few
			passes++
			if packs > 4 {
				t.Errorf("write %d: %d packs after a pass", i, packs)
			}
		}
		prev = packs
	}
	if most > DefaultAutoPackLimit {
		t.Errorf("%d packs at most: maintenance should keep them at gc.autoPackLimit (%d) or fewer", most, DefaultAutoPackLimit)
	}
	if passes < 2 {
		t.Errorf("%d maintenance passes in %d writes", passes, len(commits))
	}
	s.Close()
	chain := chainSet(t, reopen(t, dir), commits[len(commits)-1])
	for _, c := range commits {
		if !chain[c] {
			t.Fatalf("commit %s lost", c)
		}
	}
	Fsck(t, dir)
}

// gc.autoPackLimit sets the pack count that starts maintenance, and 0 or
// a negative value (of it or of gc.auto) turns small packs off: a write leaves its objects loose, as
// git does, rather than packs that no maintenance would roll up.
func TestSmallPacksConfig(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		key, value  string
		loose, most int // after one write; packs at most over 12
	}{
		{"gc.autoPackLimit", "0", 3, 0},
		{"gc.auto", "0", 3, 0},
		// negative turns it off too, as in git (gc.c: "Setting gc.auto to
		// 0 or negative can disable the automatic gc"; too_many_packs
		// returns 0 for a gc.autoPackLimit <= 0)
		{"gc.autoPackLimit", "-1", 3, 0},
		{"gc.auto", "-1", 3, 0},
		{"gc.autoPackLimit", "4", 0, 4},
	} {
		st := NewTestStore(t)
		dir := st.Path()
		st.Close()
		git(t, dir, "config", tc.key, tc.value)
		s := reopen(t, dir)
		smallWrite(t, s, 0)
		if loose, _ := looseAndPacks(t, dir); loose != tc.loose {
			t.Errorf("%s %s: %d loose objects after a write of 3; want %d", tc.key, tc.value, loose, tc.loose)
		}
		most := 0
		for i := 0; i < 12; i++ {
			smallWrite(t, s, i+1)
			_, packs := looseAndPacks(t, dir)
			most = max(most, packs)
		}
		if most != tc.most {
			t.Errorf("%s %s: %d packs at most over 12 writes; want %d (a pass starts past gc.autoPackLimit, as git's)", tc.key, tc.value, most, tc.most)
		}
		s.Close()
	}
}

// A small pack one of whose objects does not read (or does not hash to its
// id) is left whole, for verify and git fsck to report, while the sound
// small packs are packed and removed; an object both loose and in a small
// pack, or in two small packs, goes into the new pack once.
func TestPackSmallPacksLeavesCorrupt(t *testing.T) {
	t.Parallel()
	s, dir := passOnlyByTest(t)
	writeSmallUpdates(t, s, "refs/heads/main", 3)
	packs := packNames(t, dir)
	if len(packs) != 3 {
		t.Fatalf("packs: %v", packs)
	}
	// two blobs written loose, and the first of them in two more small
	// packs, the second in one
	shared := putBlob(t, s, "in two small packs and loose\n")
	other := putBlob(t, s, "beside it\n")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	for _, ids := range [][]OID{{shared}, {shared, other}} {
		cmd := GitCommand(t, dir, "pack-objects", "-q", filepath.Join(dir, "objects", "pack", "pack"))
		var in strings.Builder
		for _, id := range ids {
			in.WriteString(string(id) + "\n")
		}
		cmd.Stdin = strings.NewReader(in.String())
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git pack-objects: %v\n%s", err, out)
		}
	}
	if loose, _ := looseAndPacks(t, dir); loose != 2 {
		t.Fatalf("%d loose objects; want the two blobs (fewer than smallPackMin go loose)", loose)
	}
	// damage a byte of the first write's blob in its pack (stored
	// uncompressed: zlib stored blocks)
	var victim string
	var data []byte
	for _, p := range packs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if i := bytes.Index(b, []byte("small write 0")); i >= 0 {
			victim, data = p, b
			data[i] ^= 0x01
			break
		}
	}
	if victim == "" {
		t.Fatal("no pack holds the first write's blob")
	}
	os.Chmod(victim, 0o644)
	if err := os.WriteFile(victim, data, 0o444); err != nil {
		t.Fatal(err)
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	after := packNames(t, dir)
	if !fileExists(victim) || !fileExists(strings.TrimSuffix(victim, ".pack")+".idx") {
		t.Errorf("the damaged small pack was removed: %v", after)
	}
	if len(after) != 2 {
		t.Errorf("packs after maintenance: %v; want the damaged one and the new one", after)
	}
	if loose, _ := looseAndPacks(t, dir); loose != 0 {
		t.Errorf("%d loose objects after maintenance", loose)
	}
	for _, id := range []OID{shared, other} {
		s.st.Reindex()
		if _, err := s.Blob(id); err != nil {
			t.Errorf("blob %s after maintenance: %v", id, err)
		}
	}
	var fresh string
	for _, p := range after {
		if p != victim {
			fresh = p
		}
	}
	out := git(t, dir, "verify-pack", "-v", strings.TrimSuffix(fresh, ".pack")+".idx")
	if n := strings.Count(out, string(shared)); n != 1 {
		t.Errorf("the shared blob is %d times in the new pack; want once:\n%s", n, out)
	}
}

// A small pack of few objects but many bytes (a large document's write) is
// not gathered by the pass: it is left to the roll-ups, which copy it
// without inflating it. Before, each pass read it whole again, searched it
// for deltas and compressed it anew, until its pack reached packThreshold
// objects (a 20 MB document made each pass take 150-490 ms).
func TestPackSmallPacksLeavesLargeOnes(t *testing.T) {
	t.Parallel()
	s, dir := passOnlyByTest(t)
	big := make([]byte, smallPackBytes+1)
	rand.New(rand.NewSource(1)).Read(big) // does not compress
	blob := putBlob(t, s, string(big))
	tree, err := s.PutTree([]TreeEntry{{Name: "large.bin", Mode: ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "a large document\n"})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: tip})
	large := packNames(t, dir)
	if len(large) != 1 {
		t.Fatalf("packs after the large write: %v", large)
	}
	fi, err := os.Stat(large[0])
	if err != nil || fi.Size() < smallPackBytes {
		t.Fatalf("the large write's pack: %v, %v; want one past %d bytes", fi, err, smallPackBytes)
	}
	for i := 0; i < 2; i++ {
		smallWrite(t, s, i)
	}
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	after := packNames(t, dir)
	if !slices.Contains(after, large[0]) {
		t.Fatalf("the large pack was gathered by the pass: packs %v", after)
	}
	if fi2, err := os.Stat(large[0]); err != nil || !os.SameFile(fi, fi2) || !fi2.ModTime().Equal(fi.ModTime()) {
		t.Errorf("the large pack was written again")
	}
	if len(after) != 2 {
		t.Errorf("packs after the pass: %v; want the large one and the two small ones packed into one", after)
	}
	s.Close()
	chainSet(t, reopen(t, dir), tip)
	Fsck(t, dir)
}

// The list of small-pack files a handle keeps for its next Update's sync
// (flushForUpdate) is emptied when the files are synced, by Sync as by an
// Update: a long-lived handle (the MCP server's) that writes and syncs
// without moving a ref does not grow it. Before, each Sync left the two
// names of each small pack in it for good.
func TestSmallPacksForgottenOnceSynced(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t).(*repo)
	for i := 0; i < 4; i++ {
		for j := 0; j < smallPackMin; j++ {
			putBlob(t, s, fmt.Sprintf("blob %d of sync %d\n", j, i))
		}
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if n := len(s.smallPacks); n != 0 {
			t.Fatalf("after sync %d: %d small-pack files still listed for a sync", i, n)
		}
	}
	if _, packs := looseAndPacks(t, s.path); packs != 4 {
		t.Fatalf("%d packs; want the four syncs' small packs", packs)
	}
}

// gc.auto and gc.autoPackLimit are read as git reads an integer: a unit k,
// m or g multiplies by 1024, 1024^2, 1024^3. Before, "16k" was not a
// number and gave the default (16 packs), where git waits for 16,384.
func TestGCSettingUnits(t *testing.T) {
	t.Parallel()
	for v, want := range map[string]int{
		"16": 16, "16k": 16 << 10, "2K": 2 << 10, "1m": 1 << 20, "1G": 1 << 30, "-1": 0, "0": 0, " 7 ": 7,
		"": DefaultAutoPackLimit, "k": DefaultAutoPackLimit, "16x": DefaultAutoPackLimit, "3g": DefaultAutoPackLimit, "0x10": DefaultAutoPackLimit,
	} {
		cfg := gitconfig.New()
		if v != "" {
			cfg.Section("gc").SetOption("autoPackLimit", v)
		}
		if got := autoPackLimitFromConfig(cfg); got != want {
			t.Errorf("gc.autoPackLimit %q: %d; want %d", v, got, want)
		}
	}
}

// A pack with both a .keep and a .mtimes file is one pack maintenance may
// not take, counted once: it takes nothing off the packs it may take, and
// neither does a .keep or .mtimes file whose pack has no index.
func TestPacksPastLimitCountsEachPackOnce(t *testing.T) {
	dir := t.TempDir()
	// three packs maintenance may take
	for _, b := range []string{"pack-a", "pack-b", "pack-c"} {
		touchFiles(t, dir, b+".pack", b+".idx")
	}
	// one held by both a .keep and a .mtimes file (a cruft pack kept)
	touchFiles(t, dir, "pack-d.pack", "pack-d.idx", "pack-d.keep", "pack-d.mtimes")
	// a .keep and a .mtimes with no index beside them
	touchFiles(t, dir, "pack-e.keep", "pack-f.mtimes")
	if !packsPastLimit(dir, 2) {
		t.Error("3 packs maintenance may take, limit 2: not past the limit")
	}
	if packsPastLimit(dir, 3) {
		t.Error("3 packs maintenance may take, limit 3: past the limit")
	}
}
