package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
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
