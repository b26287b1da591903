package gitstore

import (
	"context"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/testsize"
)

// TestCopyLocalObjects: a local repository's objects are copied into an
// empty one (git builds the index); a source it does not copy (not on a
// path, objects in an alternate, shallow) is declined with nothing written.
func TestCopyLocalObjects(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := looseWrites(NewTestStore(t))
	c := mkCommit(t, remote, "journal")
	mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
	if err := remote.Sync(); err != nil {
		t.Fatal(err)
	}
	decline := func(name, url string) {
		t.Helper()
		dst, tr := newTransport(t)
		copied, err := tr.CopyLocalObjects(ctx, url)
		if copied || err != nil {
			t.Fatalf("%s: copied %v, %v; want declined", name, copied, err)
		}
		if ok, _ := dst.Has(c); ok {
			t.Fatalf("%s: a declined copy wrote objects", name)
		}
	}
	decline("git URL", "git://127.0.0.1/x.git")
	decline("relative path", "relative/x.git")

	dst, tr := newTransport(t)
	copied, err := tr.CopyLocalObjects(ctx, "file://"+remote.Path())
	if !copied || err != nil {
		t.Fatalf("copy: %v, %v", copied, err)
	}
	if ok, err := dst.Has(c); !ok || err != nil {
		t.Fatalf("the copy lacks %s (%v)", c, err)
	}
	if _, err := dst.Commit(c); err != nil {
		t.Fatal(err)
	}

	shallow := filepath.Join(remote.Path(), "shallow")
	writeTestFile(t, shallow, string(c)+"\n")
	decline("shallow", remote.Path())
	os.Remove(shallow)
	alt := filepath.Join(remote.Path(), "objects", "info", "alternates")
	os.MkdirAll(filepath.Dir(alt), 0o755)
	writeTestFile(t, alt, t.TempDir()+"\n")
	decline("alternates", remote.Path())
	os.Remove(alt)

	// symbolic links in objects/ are not followed (git's local clone
	// refuses them too): a loose object, then a pack
	loose := filepath.Join(remote.Path(), "objects", string(c)[:2], string(c)[2:])
	elsewhere := filepath.Join(t.TempDir(), "obj")
	if err := os.Rename(loose, elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, loose); err != nil {
		t.Fatal(err)
	}
	decline("loose object as a symlink", remote.Path())
	os.Remove(loose)
	if err := os.Rename(elsewhere, loose); err != nil {
		t.Fatal(err)
	}
	git(t, remote.Path(), "repack", "-adq")
	packs, _ := filepath.Glob(filepath.Join(remote.Path(), "objects", "pack", "pack-*.pack"))
	if len(packs) != 1 {
		t.Fatalf("packs after repack: %v", packs)
	}
	moved := filepath.Join(t.TempDir(), "p.pack")
	if err := os.Rename(packs[0], moved); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(moved, packs[0]); err != nil {
		t.Fatal(err)
	}
	decline("pack as a symlink", remote.Path())
	os.Remove(packs[0])
	if err := os.Rename(moved, packs[0]); err != nil {
		t.Fatal(err)
	}
	dst, tr = newTransport(t)
	if copied, err := tr.CopyLocalObjects(ctx, remote.Path()); !copied || err != nil {
		t.Fatalf("copy of the repacked source: %v, %v", copied, err)
	}
	if ok, err := dst.Has(c); !ok || err != nil {
		t.Fatalf("the copy of the repacked source lacks %s (%v)", c, err)
	}
}

func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// cancelOnReceiving is a progress writer that cancels the copy when the
// copy's meter starts ("Receiving objects:   0%"), and keeps what it got.
type cancelOnReceiving struct {
	cancel context.CancelFunc
	mu     sync.Mutex
	got    strings.Builder
	at     time.Time
}

func (w *cancelOnReceiving) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.got.Write(p)
	if w.at.IsZero() && strings.Contains(w.got.String(), "Receiving objects:   0%") {
		w.at = time.Now()
		w.cancel()
	}
	return len(p), nil
}

// commitBig commits data as the file "big" of a commit that refs/heads/main
// names (it had none) and returns the commit.
func commitBig(t *testing.T, s Store, data []byte) OID {
	t.Helper()
	blob, err := s.PutBlob(data)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.PutTree([]TreeEntry{{Name: "big", Mode: ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "big\n"})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c})
	return c
}

// TestCopyLonePackCancel: Ctrl-C while the one pack of a source is copied
// stops the copy (it used to run to the end of the file, however large)
// and leaves nothing in the target's objects/pack.
func TestCopyLonePackCancel(t *testing.T) {
	t.Parallel()
	remote := NewTestStore(t)
	big := make([]byte, testsize.Pick(t, 4<<20, 256<<20)) // incompressible: the pack is as large
	rand.Read(big)
	commitBig(t, remote, big)
	git(t, remote.Path(), "repack", "-adq")
	if packs, _ := filepath.Glob(filepath.Join(remote.Path(), "objects", "pack", "pack-*.pack")); len(packs) != 1 {
		t.Fatalf("packs of the source: %v", packs)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	w := &cancelOnReceiving{cancel: cancel}
	dst := NewTestStore(t)
	tr, err := NewTransport(dst.Path(), TransportOptions{Progress: w})
	if err != nil {
		t.Skip(err)
	}
	copied, err := tr.CopyLocalObjects(ctx, remote.Path())
	returned := time.Now()
	w.mu.Lock()
	got, at := w.got.String(), w.at
	w.mu.Unlock()
	if at.IsZero() {
		t.Fatalf("the copy never started its meter (copied %v, %v): %q", copied, err, got)
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("copy cancelled as it started: copied %v, err %v; want context.Canceled", copied, err)
	}
	if strings.Contains(got, "Receiving objects: 100%") {
		t.Errorf("the copy ran to the end after the cancel: %q", got)
	}
	// A cancellation test: the copy stopped because of the cancel
	// (context.Canceled, the meter short of 100%); the wall bound is wide,
	// for loaded machines.
	if d := returned.Sub(at); d > 30*time.Second {
		t.Errorf("the copy returned %v after the cancel", d)
	}
	left, _ := os.ReadDir(filepath.Join(dst.Path(), "objects", "pack"))
	for _, f := range left {
		t.Errorf("left in the target: objects/pack/%s", f.Name())
	}
}
