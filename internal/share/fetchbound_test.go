package share

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testproc"
)

// TestFetchBoundStopsPullAndClone: a remote (stock git daemon on
// 127.0.0.1) that sends more than MaxFetchBytes stops the pull's and the
// clone's git fetch. The pull fails naming the remote's URL and the limit,
// with a hint naming the option to raise it; no ref of the store moved and
// no temporary pack is left in it. The clone leaves nothing at DIR nor
// beside it. Git 2.39 bounds nothing itself: before, both fetched the
// whole document (1.3 MB of base64) of random bytes under a limit of 64 KiB. Under
// the default limit the same pull and clone pass.
func TestFetchBoundStopsPullAndClone(t *testing.T) {
	t.Parallel()
	big := make([]byte, 1<<20)
	rand.Read(big)
	a := newProject(t, map[string]string{"small": "refunds within 30 days\n", "big": base64.StdEncoding.EncodeToString(big)})
	a.run(t, "a-1", "small")
	base := t.TempDir()
	d := startDaemon(t, base)
	bareServer(t, base, "shared.git")
	u := d.url("shared.git")
	addRemote(t, a, "origin", u)
	mustPush(t, a, "origin")

	b := newProject(t, map[string]string{"other": "drain, then deploy\n"})
	addRemote(t, b, "origin", u)
	mustPull(t, b, "origin")
	// the remote now holds the large document
	a.run(t, "a-2", "small", "big")
	mustPush(t, a, "origin")

	const limit = 64 << 10
	slow := slowProxy(t, d.port)
	u = slow + "/shared.git"
	addRemote(t, b, "slow", u)
	before := gitAllRefs(t, b.path())
	packs := packNames(t, b.path())
	_, err := Pull(context.Background(), b.s, "slow", Options{MaxFetchBytes: limit})
	if !errors.Is(err, gitstore.ErrFetchTooLarge) {
		t.Fatalf("pull of 1.3 MB under a 64 KiB limit: got %v, want ErrFetchTooLarge", err)
	}
	if msg := err.Error(); !strings.Contains(msg, u) || !strings.Contains(msg, "64KiB") {
		t.Errorf("the error names neither the remote %s nor the limit: %v", u, err)
	}
	if h := hint.Of(err); !strings.Contains(h, "--max-fetch-bytes") {
		t.Errorf("the hint does not name the option to raise the limit: %q", h)
	}
	if after := gitAllRefs(t, b.path()); after != before {
		t.Errorf("a stopped pull moved refs:\n%s\n%s", before, after)
	}
	assertNoGitTemps(t, b.path())
	if after := packNames(t, b.path()); after != packs {
		t.Errorf("the pack arrived whole before git was stopped: packs %s, then %s", packs, after)
	}

	dst := filepath.Join(t.TempDir(), "c", ".readproof")
	_, err = Clone(context.Background(), u, dst, Options{MaxFetchBytes: limit})
	if !errors.Is(err, gitstore.ErrFetchTooLarge) || !strings.Contains(hint.Of(err), "--max-fetch-bytes") {
		t.Fatalf("clone of 1.3 MB under a 64 KiB limit: got %v (hint %q), want ErrFetchTooLarge", err, hint.Of(err))
	}
	if _, err := os.Lstat(filepath.Dir(dst)); !os.IsNotExist(err) {
		t.Errorf("a stopped clone left %s: %v", filepath.Dir(dst), err)
	}

	if res := mustPull(t, b, "origin"); len(res.NewRuns) != 1 {
		t.Fatalf("pull under the default limit: %+v", res)
	}
	if _, err := Clone(context.Background(), u, dst, Options{}); err != nil {
		t.Fatalf("clone under the default limit: %v", err)
	}
}

// assertNoGitTemps fails when objects/pack of gitDir holds a temporary
// file of git's.
func assertNoGitTemps(t *testing.T, gitDir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "tmp_") {
			t.Errorf("a stopped fetch left %s", e.Name())
		}
	}
}

// packNames lists the packs in gitDir's objects/pack, one line.
func packNames(t *testing.T, gitDir string) string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(gitDir, "objects", "pack"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".pack") {
			names = append(names, e.Name())
		}
	}
	return strings.Join(names, " ")
}

// slowProxy forwards git:// connections to the daemon on port, sending
// the daemon's answers 4 KiB each 10 ms, and returns its git:// URL base.
func slowProxy(t *testing.T, port int) string {
	t.Helper()
	addr, stop, err := testproc.SlowFront(fmt.Sprintf("127.0.0.1:%d", port), 4<<10, 10*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return "git://" + addr
}

// TestPullOnlyStorePacksMaintained: git keeps each pull's fetch as a pack
// of its own (fetch.unpackLimit=1, for the fetch bound), so a store that
// only pulls, writing nothing of its own, gained a pack per pull that
// maintenance never counted: 40 pulls left 40 packs. Past
// gc.autoPackLimit (16) they are rolled up as a write's small packs are.
func TestPullOnlyStorePacksMaintained(t *testing.T) {
	t.Parallel()
	a := newProject(t, map[string]string{"small": "refunds within 30 days\n"})
	u := bareServer(t, t.TempDir(), "shared.git")
	addRemote(t, a, "origin", u)
	b := newProject(t, map[string]string{"other": "drain, then deploy\n"})
	addRemote(t, b, "origin", u)
	for i := 0; i < 40; i++ {
		a.run(t, fmt.Sprintf("a-%d", i), "small")
		mustPush(t, a, "origin")
		mustPull(t, b, "origin")
	}
	if n := len(strings.Fields(packNames(t, b.path()))); n > gitstore.DefaultAutoPackLimit+1 {
		t.Errorf("after 40 pulls the store holds %d packs, want at most %d", n, gitstore.DefaultAutoPackLimit+1)
	}
	if _, err := b.s.Manifest("a-39"); err != nil {
		t.Errorf("the last run pulled: %v", err)
	}
}
