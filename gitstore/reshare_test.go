package gitstore

import (
	"context"
	"os/exec"
	"runtime"
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
