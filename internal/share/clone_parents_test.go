package share

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFailedCloneRemovesParentsItMade: `readproof clone URL c/.readproof`
// makes c when it is missing; a clone that fails removes it again, as it
// removes its staging directory, so a refused clone leaves nothing behind.
// A parent that was there before stays.
func TestFailedCloneRemovesParentsItMade(t *testing.T) {
	t.Parallel()
	needGit(t)
	top := t.TempDir()
	missing := filepath.Join(top, "nowhere.git") // no repository: the clone fails
	dst := filepath.Join(top, "c", "d", ".readproof")
	if _, err := Clone(context.Background(), missing, dst, Options{}); err == nil {
		t.Fatal("clone of a missing repository succeeded")
	}
	if _, err := os.Lstat(filepath.Join(top, "c")); !os.IsNotExist(err) {
		t.Errorf("a failed clone into %s left %s (%v)", dst, filepath.Join(top, "c"), err)
	}
	// a parent that existed stays, even empty
	kept := filepath.Join(top, "kept")
	if err := os.Mkdir(kept, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Clone(context.Background(), missing, filepath.Join(kept, ".readproof"), Options{}); err == nil {
		t.Fatal("clone of a missing repository succeeded")
	}
	if fi, err := os.Stat(kept); err != nil || !fi.IsDir() {
		t.Errorf("a failed clone removed %s, which was there before it: %v", kept, err)
	}
}
