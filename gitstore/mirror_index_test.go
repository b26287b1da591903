package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// doneAfter is a context that is done once its Err has been asked n
// times: a cancellation that lands while the work is under way, wherever
// the work looks.
type doneAfter struct {
	context.Context
	left atomic.Int64
}

func (c *doneAfter) Err() error {
	if c.left.Add(-1) < 0 {
		return context.Canceled
	}
	return nil
}

// receivedPack writes the pack of everything reachable from main in the
// repository up into a file in the mirror directory dir, as receivePack
// leaves it.
func receivedPack(t *testing.T, up, dir string) *os.File {
	t.Helper()
	git, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	f, err := os.CreateTemp(dir, receivedPrefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	cmd := exec.Command(git, "-C", up, "pack-objects", "--stdout", "--revs")
	cmd.Env = gitEnv()
	cmd.Stdin = strings.NewReader("main\n")
	cmd.Stdout = f
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pack-objects: %v\n%s", err, stderr.String())
	}
	if _, err := f.Seek(0, 0); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestMirrorIndexStopsOnCancel: the index of a fetched pack (2,001
// objects) stops with the context's error when the context is cancelled
// while it runs, and moves no pack into the mirror; go-git's
// UpdateObjectStorage, used before, took no context, so a source's
// timeout or Ctrl-C waited for the whole pack to be indexed. With a live
// context the same pack is stored and its objects read.
func TestMirrorIndexStopsOnCancel(t *testing.T) {
	t.Parallel()
	up := manyBlobs(t, 2000, 0)
	tip := plumbing.NewHash(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "main")))
	for _, c := range []struct {
		name string
		ctx  context.Context
	}{
		{"cancelled", func() context.Context { c := &doneAfter{Context: context.Background()}; c.left.Store(500); return c }()},
		{"live", context.Background()},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "mirror")
			if err := initMirror(dir); err != nil {
				t.Fatal(err)
			}
			st := filesystem.NewStorage(osfs.New(dir), cache.NewObjectLRUDefault())
			defer st.Close()
			f := receivedPack(t, up, dir)
			err := storeReceived(c.ctx, st, dir, f)
			packs, _ := filepath.Glob(filepath.Join(dir, "objects", "pack", "*"))
			if c.name == "cancelled" {
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("index under a context cancelled meanwhile: got %v, want context.Canceled", err)
				}
				if len(packs) != 0 {
					t.Fatalf("a stopped index left %v", packs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(packs) != 2 {
				t.Fatalf("want a pack and its index, got %v", packs)
			}
			if err := st.HasEncodedObject(tip); err != nil {
				t.Fatalf("the stored pack does not hold main's commit: %v", err)
			}
		})
	}
}

// TestRemoveReceivedTakesIndex: what a fetch killed while it wrote a
// received pack's index (storeReceived) left in objects/pack goes with
// the spooled pack at the next fetch; before, only the spooled pack did,
// and the index's temporary file stayed for good. The mirror's packs stay.
func TestRemoveReceivedTakesIndex(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "mirror")
	if err := initMirror(dir); err != nil {
		t.Fatal(err)
	}
	packDir := filepath.Join(dir, "objects", "pack")
	if err := os.MkdirAll(packDir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{filepath.Join(dir, receivedPrefix+"1"), filepath.Join(packDir, receivedIdxPrefix+"2"), filepath.Join(packDir, "pack-a.pack"), filepath.Join(packDir, "pack-a.idx")} {
		if err := os.WriteFile(f, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	removeReceived(dir)
	left, _ := filepath.Glob(filepath.Join(packDir, "*"))
	spooled, _ := filepath.Glob(filepath.Join(dir, receivedPrefix+"*"))
	if len(left) != 2 || len(spooled) != 0 {
		t.Errorf("after removeReceived: objects/pack holds %v, the mirror %v; want the pack and its index alone", left, spooled)
	}
}
