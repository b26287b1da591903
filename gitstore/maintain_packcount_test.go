package gitstore

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPacksPastLimitLeavesOutEachHeldPack: a pack with a .mtimes file alone
// (a cruft pack, whose objects git ages by it), with a .keep file alone, or
// with both, is one maintenance may not take, and is left out of the count
// on its own name: three packs it may take and one held stay within a
// limit of 3. TestPacksPastLimitCountsEachPackOnce holds the pack with both;
// here each file alone is held too, so that dropping the .mtimes (or .keep)
// case of packsPastLimit fails a test.
func TestPacksPastLimitLeavesOutEachHeldPack(t *testing.T) {
	t.Parallel()
	for _, held := range [][]string{{".mtimes"}, {".keep"}, {".keep", ".mtimes"}} {
		dir := t.TempDir()
		for _, b := range []string{"pack-a", "pack-b", "pack-c"} {
			touchFiles(t, dir, b+".pack", b+".idx")
		}
		touchFiles(t, dir, "pack-held.pack", "pack-held.idx")
		for _, ext := range held {
			touchFiles(t, dir, "pack-held"+ext)
		}
		if packsPastLimit(dir, 3) {
			t.Errorf("3 packs maintenance may take and one with %v, limit 3: past the limit (the held pack was counted)", held)
		}
		if !packsPastLimit(dir, 2) {
			t.Errorf("3 packs maintenance may take and one with %v, limit 2: not past the limit", held)
		}
	}
}

// touchFiles makes each of names an empty file in dir.
func touchFiles(t *testing.T, dir string, names ...string) {
	t.Helper()
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
