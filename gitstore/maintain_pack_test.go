package gitstore

import (
	"bytes"
	"compress/zlib"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// allObjects is every object of the repository with its type, size and
// content, as git cat-file reads them, in id order.
func allObjects(t *testing.T, dir string) []byte {
	t.Helper()
	return gitRaw(t, dir, "cat-file", "--batch-all-objects", "--batch")
}

// maintenanceOff opens a new test store with automatic maintenance off, so
// the test decides when maintain runs.
func maintenanceOff(t *testing.T) *repo {
	t.Helper()
	st := NewTestStore(t)
	dir := st.Path()
	st.Close()
	git(t, dir, "config", "gc.auto", "0")
	return reopen(t, dir).(*repo)
}

// The incremental step packs exactly the loose objects, byte for byte as
// they were (reachable or not, empty, larger than one stored zlib block,
// already packed too), removes their loose files, and the pack it writes
// is delta-compressed as git repack's would be.
func TestPackLooseSameObjects(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	rng := rand.New(rand.NewSource(1))
	doc := make([]byte, 3000)
	rng.Read(doc)
	var tip OID
	const versions = 20
	for i := 0; i < versions; i++ {
		text := fmt.Sprintf("edit %d\n%x\n", i, doc) // one line changes
		var parents []OID
		if tip != "" {
			parents = []OID{tip}
		}
		c := mkCommit(t, s, text, parents...)
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
		tip = c
	}
	big := make([]byte, 200<<10) // several stored blocks of 64 KiB
	rng.Read(big)
	putBlob(t, s, string(big))
	putBlob(t, s, "")                           // empty
	putBlob(t, s, "unreachable, never named\n") // no ref reaches it
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	// an object both packed and loose
	dup := putBlob(t, s, "packed and loose\n")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	loose, _ := looseAndPacks(t, s.path)
	if loose < 3*versions+3 {
		t.Fatalf("%d loose objects before maintenance: the test needs them loose", loose)
	}
	cmd := GitCommand(t, s.path, "pack-objects", "-q", filepath.Join(s.path, "objects", "pack", "pack"))
	cmd.Stdin = strings.NewReader(string(dup) + "\n")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git pack-objects: %v\n%s", err, out)
	}
	if loose2, packs := looseAndPacks(t, s.path); loose2 != loose || packs != 1 {
		t.Fatalf("%d loose objects and %d packs after packing a copy of one, want %d and 1", loose2, packs, loose)
	}

	before := allObjects(t, s.path)
	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	after := allObjects(t, s.path)
	if !bytes.Equal(before, after) {
		t.Fatal("the objects read differently after maintenance")
	}
	if loose, _ := looseAndPacks(t, s.path); loose != 0 {
		t.Errorf("%d loose objects left", loose)
	}
	if m, _ := filepath.Glob(filepath.Join(s.path, "objects", "[0-9a-f][0-9a-f]")); len(m) != 0 {
		t.Errorf("empty fan-out directories left: %v", m)
	}
	if m, _ := filepath.Glob(filepath.Join(s.path, stagingPrefix+"*")); len(m) != 0 {
		t.Errorf("staging directory left: %v", m)
	}
	Fsck(t, s.path)
	// 20 versions of a 6 KB document stored whole take 20 x 3 KB
	// compressed; as deltas of one another, one whole copy and 19 small
	// deltas.
	var packBytes int64
	packs, _ := filepath.Glob(filepath.Join(s.path, "objects", "pack", "*.pack"))
	for _, p := range packs {
		if fi, err := os.Stat(p); err == nil {
			packBytes += fi.Size()
		}
	}
	if packBytes-int64(len(big)) > 5*int64(len(doc)) {
		t.Errorf("packs hold %d bytes besides the large blob: the versions were not delta-compressed", packBytes-int64(len(big)))
	}
	if got := strings.Count(git(t, s.path, "verify-pack", "-v", strings.TrimSuffix(packs[len(packs)-1], ".pack")+".idx"), "\n"); got == 0 {
		t.Error("verify-pack listed nothing")
	}
}

// A loose object that is damaged (not zlib, or content that does not hash
// to its name) is not packed: it stays loose, still reported as corrupt,
// while the sound ones are packed; a staging directory a killed
// maintenance left is removed.
func TestPackLooseLeavesCorrupt(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	good := putBlob(t, s, "good\n")
	wrong := putBlob(t, s, "will hold other bytes\n")
	garbage := putBlob(t, s, "will not be zlib\n")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	loosePath := func(id OID) string { return filepath.Join(s.path, "objects", string(id)[:2], string(id)[2:]) }
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("blob 5\x00other"))
	zw.Close()
	for path, data := range map[string][]byte{loosePath(wrong): z.Bytes(), loosePath(garbage): []byte("not zlib at all")} {
		os.Chmod(path, 0o644)
		if err := os.WriteFile(path, data, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	stale := filepath.Join(s.path, stagingPrefix+"killed")
	os.MkdirAll(filepath.Join(stale, "pack"), 0o700)
	os.WriteFile(filepath.Join(stale, "pack", "tmp_pack_x"), []byte("partial"), 0o600)

	if !s.maintain(context.Background()) {
		t.Fatal("maintenance did not run")
	}
	if fileExists(stale) {
		t.Error("the staging directory of a killed maintenance was not removed")
	}
	for _, id := range []OID{wrong, garbage} {
		if !fileExists(loosePath(id)) {
			t.Errorf("damaged loose object %s was removed", id)
		}
		if _, err := s.Blob(id); err == nil {
			t.Errorf("damaged object %s reads without an error", id)
		}
	}
	if fileExists(loosePath(good)) {
		t.Error("the sound object is still loose")
	}
	if b, err := s.Blob(good); err != nil || string(b) != "good\n" {
		t.Errorf("sound object after maintenance: %q, %v", b, err)
	}
	if loose, packs := looseAndPacks(t, s.path); loose != 2 || packs != 1 {
		t.Errorf("%d loose objects and %d packs, want 2 and 1", loose, packs)
	}
}

// rollupSplit says what git repack --geometric=2 would roll up: the
// packs, by object count, that do not double from one to the next, and
// then those the rolled pack would not double; .keep packs stay out.
func TestRollupSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		counts []uint32
		keep   int // index of a pack with a .keep file, or -1
		want   int
	}{
		{nil, -1, 0},
		{[]uint32{500}, -1, 0},
		{[]uint32{500, 1000}, -1, 0},
		{[]uint32{4000, 500, 1000}, -1, 0},
		{[]uint32{500, 600}, -1, 2},
		{[]uint32{4000, 1100, 600}, -1, 2},
		{[]uint32{500, 600, 2100}, -1, 3}, // 1100 rolled, then 2100 < 2200
		{[]uint32{500, 600, 2300}, -1, 2},
		{[]uint32{500, 1000, 1500, 10000}, -1, 3},
		{[]uint32{500, 600}, 1, 0},
	} {
		dir := t.TempDir()
		for i, c := range tc.counts {
			idx := make([]byte, 8+256*4+40)
			copy(idx, []byte{0xff, 't', 'O', 'c', 0, 0, 0, 2})
			binary.BigEndian.PutUint32(idx[8+255*4:], c)
			name := filepath.Join(dir, fmt.Sprintf("pack-%040d", i))
			os.WriteFile(name+".idx", idx, 0o600)
			os.WriteFile(name+".pack", nil, 0o600) // an index alone is not listed
			if i == tc.keep {
				os.WriteFile(name+".keep", nil, 0o600)
			}
		}
		packs, ok := listRollPacks(dir)
		if !ok {
			t.Fatalf("%v: packs not listed", tc.counts)
		}
		if got := rollupSplit(packs); got != tc.want {
			t.Errorf("packs of %v objects (keep %d): rollupSplit %d, want %d", tc.counts, tc.keep, got, tc.want)
		}
	}
}

// A roll-up leaves the same objects, byte for byte, in fewer packs: the
// smallest packs go, the large one and a .keep pack stay.
func TestRollUpSameObjects(t *testing.T) {
	t.Parallel()
	s := maintenanceOff(t)
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	var tip OID
	step := func(n int) {
		for i := 0; i < n; i++ {
			var parents []OID
			if tip != "" {
				parents = []OID{tip}
			}
			c := mkCommit(t, s, fmt.Sprintf("version %d of a document\n%s", i, strings.Repeat("same text\n", 50)), parents...)
			mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", Old: tip, New: c})
			tip = c
		}
		putBlob(t, s, fmt.Sprintf("unreachable %d\n", n))
		if err := s.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := s.packLoose(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	step(40) // 121 objects
	keepPack, _ := filepath.Glob(filepath.Join(s.path, "objects", "pack", "*.pack"))
	step(5) // 6 objects (blobs and trees repeat): a .keep pack, never rolled
	packs, _ := filepath.Glob(filepath.Join(s.path, "objects", "pack", "*.pack"))
	var kept string
	for _, p := range packs {
		if p != keepPack[0] {
			kept = strings.TrimSuffix(p, ".pack")
		}
	}
	os.WriteFile(kept+".keep", nil, 0o600)
	step(10) // 11
	step(12) // 13: 11 and 13 roll up, 121 stays
	rp, _ := listRollPacks(filepath.Join(s.path, "objects", "pack"))
	t.Logf("packs before: %v", rp)
	before := allObjects(t, s.path)
	if _, packs := looseAndPacks(t, s.path); packs != 4 {
		t.Fatalf("%d packs before the roll-up, want 4", packs)
	}
	if err := s.rollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, packs := looseAndPacks(t, s.path); packs != 3 {
		t.Errorf("%d packs after the roll-up, want 3 (the large one, the kept one, the rolled one)", packs)
	}
	if !fileExists(keepPack[0]) || !fileExists(kept+".pack") {
		t.Error("the roll-up removed a pack it must leave")
	}
	if after := allObjects(t, s.path); !bytes.Equal(before, after) {
		t.Error("the objects read differently after the roll-up")
	}
	if m, _ := filepath.Glob(filepath.Join(s.path, stagingPrefix+"*")); len(m) != 0 {
		t.Errorf("staging directory left: %v", m)
	}
	Fsck(t, s.path)
	if err := s.rollUp(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, packs := looseAndPacks(t, s.path); packs != 3 {
		t.Errorf("%d packs after a second roll-up with nothing to roll, want 3", packs)
	}
}
