package share

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestFetchBoundSparesConcurrentPull: two pulls into one store at once,
// each from git daemon on 127.0.0.1 behind a slow front (about 400 KB/s),
// of a remote whose new resource chain holds 1.3 MB: the one under a limit
// of 512 KiB is stopped; the other, under the default limit, started once
// the first one's pack is arriving, adopts the chain, and its objects are
// whole, with one git fetch. Before, the refused pull measured and removed
// every temporary pack new in the store's objects/pack, the other pull's
// too, whose fetch then failed (its index-pack could not rename the pack
// it wrote) and was made again from the start.
func TestFetchBoundSparesConcurrentPull(t *testing.T) {
	logged := gitLog(t) // PATH: not parallel
	big := make([]byte, 1<<20)
	rand.Read(big)
	a := newProject(t, map[string]string{"small": "refunds within 30 days\n", "big": base64.StdEncoding.EncodeToString(big)})
	a.run(t, "a-1", "small")
	base := t.TempDir()
	d := startDaemon(t, base)
	shared := bareServer(t, base, "shared.git")
	addRemote(t, a, "origin", d.url("shared.git"))
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"other": "drain, then deploy\n"})
	addRemote(t, b, "origin", d.url("shared.git"))
	mustPull(t, b, "origin")
	// the remote gains the chain of resource big alone: its main stays
	// the one b holds, so neither pull reads main first
	a.run(t, "a-2", "small", "big")
	chain := store.ResourcesPrefix + "demo/big"
	git(t, a.path(), "push", "--quiet", shared, chain+":"+chain)

	addRemote(t, b, "slow1", slowProxy(t, d.port)+"/shared.git")
	addRemote(t, b, "slow2", slowProxy(t, d.port)+"/shared.git")
	other, err := store.Open(b.path(), nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	refused := make(chan error, 1)
	go func() {
		_, err := Pull(context.Background(), b.s, "slow1", Options{MaxFetchBytes: 512 << 10})
		refused <- err
	}()
	// the other pull starts once the refused one's git receives its pack
	for !tempPackUnder(t, b.path()) {
		select {
		case err := <-refused:
			t.Fatalf("the pull under a limit of 512 KiB ended before its pack arrived: %v", err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	res, err := Pull(context.Background(), other, "slow2", Options{})
	if rerr := <-refused; !errors.Is(rerr, gitstore.ErrFetchTooLarge) {
		t.Errorf("pull of 1.3 MB under a limit of 512 KiB: got %v, want ErrFetchTooLarge", rerr)
	}
	if err != nil {
		t.Fatalf("the pull beside it, under the default limit: %v", err)
	}
	if len(res.Resources) != 1 {
		t.Errorf("the pull beside it updated resources %v, want demo/big's chain", res.Resources)
	}
	if got, want := git(t, b.path(), "rev-parse", chain), git(t, shared, "rev-parse", chain); got != want {
		t.Errorf("chain %s after the pull: %s, want %s", chain, got, want)
	}
	git(t, b.path(), "fsck", "--strict", "--no-progress")
	fetches := 0
	for _, l := range logged() {
		if strings.Contains(l, " fetch ") && strings.HasSuffix(l, " slow2") {
			fetches++
		}
	}
	if fetches != 1 {
		t.Errorf("the pull beside the refused one ran git fetch %d times, want once", fetches)
	}
}

// tempPackUnder reports whether a temporary pack of git's (tmp_pack_*) is
// anywhere under dir.
func tempPackUnder(t *testing.T, dir string) bool {
	t.Helper()
	found := false
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), "tmp_pack_") {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	return found
}
