package gitstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestSetSharingGitSynonyms (session 22): a store whose
// core.sharedRepository says group in another of git's words for it (true,
// 1) is already shared with the group. Before, SetSharing compared the raw
// text, rewrote the config and counted one change where nothing changed
// (`readproof init --shared=group` said so).
func TestSetSharingGitSynonyms(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	git, err := lookGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	ctx := context.Background()
	if _, err := SetSharing(ctx, s.Path(), ShareGroup); err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"true", "1", "TRUE", "group"} {
		if out, err := exec.Command(git, "--git-dir="+s.Path(), "config", "core.sharedRepository", v).CombinedOutput(); err != nil {
			t.Fatalf("git config: %v: %s", err, out)
		}
		changed, err := SetSharing(ctx, s.Path(), ShareGroup)
		if err != nil {
			t.Fatal(err)
		}
		if changed != 0 {
			t.Errorf("core.sharedRepository = %s, a store shared with the group: SetSharing(group) reports %d changes, want 0", v, changed)
		}
	}
}

// TestSetSharingWalksPastUnreadableDir (session 22): SetSharing's doc says
// a file it cannot change leaves every other one still changed. Before, a
// directory it could not read (mode 000) stopped the walk there: the files
// after it kept their private modes, and the error said nothing of them.
func TestSetSharingWalksPastUnreadableDir(t *testing.T) {
	t.Parallel()
	if runtime.GOOS == "windows" {
		t.Skip("no Unix modes")
	}
	if os.Geteuid() == 0 {
		t.Skip("root reads a directory of mode 000")
	}
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", New: mkCommit(t, s, "tip")}); err != nil {
		t.Fatal(err)
	}
	// objects/00 comes before refs/ in the walk's lexical order
	locked := filepath.Join(s.Path(), "objects", "00")
	if err := os.MkdirAll(locked, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(locked, 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(locked, 0o700) })
	changed, err := SetSharing(context.Background(), s.Path(), ShareGroup)
	if err == nil || !strings.Contains(err.Error(), "objects/00") {
		t.Errorf("SetSharing with an unreadable directory: err %v, want one naming objects/00", err)
	}
	if changed == 0 {
		t.Errorf("SetSharing changed nothing")
	}
	ref := filepath.Join(s.Path(), "refs", "heads", "main")
	fi, serr := os.Stat(ref)
	if serr != nil {
		t.Fatal(serr)
	}
	if fi.Mode().Perm()&0o060 != 0o060 {
		t.Errorf("refs/heads/main, after the unreadable objects/00: mode %v, want group read and write (the walk stopped)", fi.Mode().Perm())
	}
}
