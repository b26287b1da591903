package share

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
)

// TestCloneFailureLeavesDirAsItWas: a clone from a remote git cannot reach
// into an existing empty directory leaves that directory as it was (its
// mode too), and its hint does not point at the store the failed clone
// removed again.
func TestCloneFailureLeavesDirAsItWas(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "into")
	if err := os.Mkdir(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "no-such-remote.git")
	_, err := Clone(context.Background(), missing, dir, Options{})
	if err == nil {
		t.Fatal("clone of a missing remote succeeded")
	}
	fi, serr := os.Stat(dir)
	if serr != nil {
		t.Fatalf("the directory given is gone: %v", serr)
	}
	if fi.Mode().Perm() != 0o750 {
		t.Errorf("directory mode %o after a failed clone, want 750", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a failed clone left %d entries in %s", len(entries), dir)
	}
	nothingBeside(t, dir)
	h := hint.Of(err)
	if strings.Contains(h, dir) || !strings.Contains(h, "git ls-remote "+missing) {
		t.Errorf("hint %q: want `git ls-remote %s`, not the removed store", h, missing)
	}
}

// TestCopyFailedHintGitsWords: a clone's copy whose index is left to git
// (Windows, where packs are not mapped) fails, on a full disk or past the
// file size limit, with git's words, not an errno: the hint says so, as it
// does for the copy written in Go, instead of blaming the source.
func TestCopyFailedHintGitsWords(t *testing.T) {
	t.Parallel()
	for stderr, want := range map[string]string{
		"fatal: write error: No space left on device": "free space",
		"fatal: index-pack died of signal 25":         "ulimit -f",
	} {
		err := fmt.Errorf("copy the objects of /src: %w", &gitstore.GitError{Args: []string{"index-pack", "--strict", "--stdin"}, ExitCode: 128, Stderr: stderr})
		if h := copyFailedHint(err, "/src"); !strings.Contains(h, want) || strings.Contains(h, "fsck") {
			t.Errorf("copy failed with git's %q: hint %q, want one saying %q", stderr, h, want)
		}
	}
}
