package share

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/store"
)

// movedRemoteGit puts a git on PATH that, once armed (the file it
// returns exists), answers the next fetch of object ids (FetchObjects:
// --stdin) as git does over protocol v0 when the remote moved since it was
// listed: "not our ref". The fetch after it, once the pull listed the
// remote again, runs, receiving its pack beside the directory the fetch
// bound watches and moving it there once whole: the bound measures it
// after git is done, whatever the timing.
func movedRemoteGit(t *testing.T) (arm string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	arm = filepath.Join(bin, "arm")
	script := `#!/bin/sh
case "$*" in
*" fetch "*--stdin*)
	if [ -e '` + arm + `' ]; then
		rm '` + arm + `'
		cat > /dev/null
		echo "fatal: remote error: upload-pack: not our ref 1111111111111111111111111111111111111111" >&2
		exit 128
	fi
	stage="$GIT_OBJECT_DIRECTORY.whole"
	mkdir -p "$stage/pack" || exit 1
	GIT_OBJECT_DIRECTORY="$stage" '` + real + `' "$@" || exit
	set -- "$stage"/pack/pack-*
	[ -e "$1" ] || exit 0
	exec mv "$@" "$GIT_OBJECT_DIRECTORY/pack/" ;;
esac
exec '` + real + `' "$@"
`
	gitOnPath(t, bin, script)
	return arm
}

// TestPullMovedRemoteRefusedMovesNoRef: a pull whose first fetch fails
// because the remote moved since it was listed fetches again, and that
// fetch, refused by the size bound, leaves every ref of the store as it
// was, the remote-tracking refs too. Before, the second fetch was `git
// fetch` with refspecs, which moved the tracking refs to the refused pack
// when it arrived whole between two measures, and nothing put them back.
func TestPullMovedRemoteRefusedMovesNoRef(t *testing.T) {
	arm := movedRemoteGit(t) // PATH: not parallel
	// 128 KiB of base64, which arrives whole (movedRemoteGit)
	big := make([]byte, 96<<10)
	rand.Read(big)
	a := newProject(t, map[string]string{"small": "refunds within 30 days\n", "big": base64.StdEncoding.EncodeToString(big)})
	a.run(t, "a-1", "small")
	u := bareServer(t, t.TempDir(), "shared.git")
	addRemote(t, a, "origin", u)
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"other": "drain, then deploy\n"})
	addRemote(t, b, "origin", u)
	mustPull(t, b, "origin")
	a.run(t, "a-2", "small", "big")
	mustPush(t, a, "origin")

	before := allRefs(t, b.path())
	writeFile(t, arm, "")
	_, err := Pull(context.Background(), b.s, "origin", Options{MaxFetchBytes: 64 << 10})
	if !errors.Is(err, gitstore.ErrFetchTooLarge) || !strings.Contains(err.Error(), "bytes arrived from") {
		t.Fatalf("pull of 128 KiB, arriving whole, under a 64 KiB limit after the remote moved: got %v, want ErrFetchTooLarge measured once git was done", err)
	}
	t.Logf("ERR %v", err)
	if after := allRefs(t, b.path()); after != before {
		t.Errorf("a refused pull moved refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if _, err := os.Lstat(arm); !os.IsNotExist(err) {
		t.Fatalf("the pull's first fetch did not fail as the remote moved: %v", err)
	}
	if res := mustPull(t, b, "origin"); len(res.NewRuns) != 1 {
		t.Errorf("pull under the default limit: %+v", res)
	}
	if got := git(t, b.path(), "rev-parse", RemotesPrefix+"origin/runs/a-2"); got != git(t, u, "rev-parse", store.RunsPrefix+"a-2") {
		t.Errorf("tracking ref of a-2 after the pull: %s", got)
	}
}

// TestPullRemoteKeepsMovingHint: a pull whose fetch fails as the remote
// moved since it was listed, twice (over protocol v0, "not our ref"),
// stops after listing it once again, moves no ref, and says so, with a
// hint to pull again once pushes pause. Before, the hint was to check the
// remote's URL and that git can reach it, which it did.
func TestPullRemoteKeepsMovingHint(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	gitOnPath(t, bin, `#!/bin/sh
case "$*" in
*" fetch "*--stdin*)
	cat > /dev/null
	echo "fatal: remote error: upload-pack: not our ref 1111111111111111111111111111111111111111" >&2
	exit 128 ;;
esac
exec '`+real+`' "$@"
`) // PATH: not parallel
	a := newProject(t, map[string]string{"small": "refunds within 30 days\n"})
	a.run(t, "a-1", "small")
	u := bareServer(t, t.TempDir(), "shared.git")
	addRemote(t, a, "origin", u)
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"other": "drain, then deploy\n"})
	addRemote(t, b, "origin", u)
	before := allRefs(t, b.path())
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if err == nil || !strings.Contains(err.Error(), "no longer had a tip it had just listed, twice") || !strings.Contains(hint.Of(err), "pull again once they pause") {
		t.Fatalf("pull of a remote that keeps moving: got %v (hint %q)", err, hint.Of(err))
	}
	if after := allRefs(t, b.path()); after != before {
		t.Errorf("a failed pull moved refs:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}
