package gitstore

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOpenSourceFile: openSourceFile opens the regular file lstat saw, and
// refuses, with an error naming the path, a symbolic link (to a file
// outside the directory or inside it) or another file swapped in after the
// lstat; a file gone is fs.ErrNotExist.
func TestOpenSourceFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := filepath.Join(dir, "objects")
	secret := filepath.Join(dir, "secret")
	writeFile := func(p, body string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(secret, "not the source's\n")
	writeFile(filepath.Join(src, "pack", "a"), "a\n")
	writeFile(filepath.Join(src, "pack", "b"), "b\n")
	root, err := os.OpenRoot(src)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	want := lstatSourceFile(root, "pack/a")
	if want == nil {
		t.Fatal("lstatSourceFile: a regular file is not one")
	}
	f, err := openSourceFile(root, "pack/a", want)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := io.ReadAll(f); string(b) != "a\n" {
		t.Fatalf("read %q", b)
	}
	f.Close()
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errSourceSwapped) || !strings.Contains(err.Error(), filepath.Join(src, "pack", "a")) {
			t.Fatalf("%s: %v; want errSourceSwapped naming %s", what, err, filepath.Join(src, "pack", "a"))
		}
	}
	swap := func(target string) {
		t.Helper()
		p := filepath.Join(src, "pack", "a")
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	// a link to a file outside, swapped in after the lstat
	swap(secret)
	f, err = openSourceFile(root, "pack/a", want)
	if f != nil {
		b, _ := io.ReadAll(f)
		t.Fatalf("followed the link swapped in, read %q", b)
	}
	refused("link out of the directory", err)
	if lstatSourceFile(root, "pack/a") != nil {
		t.Fatal("lstatSourceFile takes a symbolic link for a file")
	}
	// ... or to a file inside it
	swap("b")
	f, err = openSourceFile(root, "pack/a", want)
	if f != nil {
		t.Fatal("followed the link to another file of the directory")
	}
	refused("link inside the directory", err)
	// what lstat said was a link: refused without an open
	_, err = openSourceFile(root, "pack/a", nil)
	refused("no regular file listed", err)
	// another regular file renamed over it
	os.Remove(filepath.Join(src, "pack", "a"))
	writeFile(filepath.Join(src, "pack", "a"), "a\n")
	want = lstatSourceFile(root, "pack/a")
	if err := os.Rename(filepath.Join(src, "pack", "b"), filepath.Join(src, "pack", "a")); err != nil {
		t.Fatal(err)
	}
	f, err = openSourceFile(root, "pack/a", want)
	if f != nil {
		t.Fatal("opened another file than the one listed")
	}
	refused("another file renamed over it", err)
	os.Remove(filepath.Join(src, "pack", "a"))
	if _, err := openSourceFile(root, "pack/a", want); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a file gone: %v, want ErrNotExist", err)
	}
}

// TestCopyLocalObjectsRefusesSwappedLink: a pack or loose object of the
// source swapped for a symbolic link between the copy's look at it (lstat)
// and its open is not read: the copy fails with an error naming the file,
// and writes no object from it. (A link there before the look is declined:
// TestCopyLocalObjects.) Not parallel: it sets the sourceListed hook.
func TestCopyLocalObjectsRefusesSwappedLink(t *testing.T) {
	ctx := context.Background()
	for _, kind := range []string{"pack", "loose"} {
		remote := looseWrites(NewTestStore(t)) // "loose" needs its objects loose
		c := mkCommit(t, remote, "journal "+kind)
		mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
		if err := remote.Sync(); err != nil {
			t.Fatal(err)
		}
		objects := filepath.Join(remote.Path(), "objects")
		var victim string
		if kind == "pack" {
			git(t, remote.Path(), "repack", "-adq")
			packs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.pack"))
			if len(packs) != 1 {
				t.Fatalf("packs after repack: %v", packs)
			}
			victim = packs[0]
		} else {
			victim = filepath.Join(objects, string(c)[:2], string(c)[2:])
		}
		swapped := false
		sourceListed = func(dir string) {
			if dir != objects {
				return
			}
			moved := filepath.Join(t.TempDir(), "moved")
			if err := os.Rename(victim, moved); err != nil {
				t.Error(err)
				return
			}
			if err := os.Symlink(moved, victim); err != nil {
				t.Error(err)
				return
			}
			swapped = true
		}
		dst, tr := newTransport(t)
		copied, err := tr.CopyLocalObjects(ctx, remote.Path())
		sourceListed = nil
		if !swapped {
			t.Fatalf("%s: the hook did not run: the test proves nothing", kind)
		}
		if !copied || !errors.Is(err, errSourceSwapped) || !strings.Contains(err.Error(), victim) {
			t.Fatalf("%s swapped for a link: copied %v, %v; want an error naming %s", kind, copied, err, victim)
		}
		if ok, _ := dst.Has(c); ok {
			t.Fatalf("%s: the copy took %s through the link", kind, c)
		}
		t.Logf("%s: %v", kind, err)
	}
}

// TestCopyLocalObjectsWhileSourceRepacks: a source whose gc (or automatic
// maintenance) packs its loose objects and removes their files, or writes
// its unchanged pack again under the same name (new files renamed over the
// pack and its index, as git repack does), between the copy's listing and
// its open of them is listed again and copied whole; one repacked at every
// listing is left to the fetch (declined), with no half-written pack left
// behind. Before, the copy failed with "loose object …: no such file or
// directory" and a hint to fsck a source that was fine (a path clone during
// `readproof gc` of the source failed 67 times in 210), or with "not the
// regular file that was listed: a symbolic link or another file took its
// place". Not parallel: it sets the sourceListed hook.
func TestCopyLocalObjectsWhileSourceRepacks(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		packed bool // the source is one pack when copied
		every  bool // repacked at every listing
	}{
		{"loose objects packed away", false, false},
		{"pack written again under its name", true, false},
		{"repacked at every listing", false, true},
	} {
		remote := looseWrites(NewTestStore(t))
		c := mkCommit(t, remote, "journal")
		mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
		if err := remote.Sync(); err != nil {
			t.Fatal(err)
		}
		objects := filepath.Join(remote.Path(), "objects")
		if tc.packed {
			git(t, remote.Path(), "repack", "-adq")
		}
		loose := filepath.Join(objects, string(c)[:2], string(c)[2:])
		idx, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
		listings := 0
		sourceListed = func(dir string) {
			if dir != objects {
				return
			}
			listings++
			if listings > 1 && !tc.every {
				return
			}
			// what gc does: pack the loose objects and remove their
			// files, or write the same pack again over the old one
			var before os.FileInfo
			if len(idx) == 1 {
				before, _ = os.Stat(idx[0])
			}
			git(t, remote.Path(), "repack", "-adq")
			if _, err := os.Lstat(loose); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("%s: the repack left %s (%v): the test proves nothing", tc.name, loose, err)
			}
			if before != nil {
				if after, err := os.Stat(idx[0]); err != nil || os.SameFile(before, after) {
					t.Errorf("%s: the repack did not write %s again (%v): the test proves nothing", tc.name, idx[0], err)
				}
			}
		}
		dst, tr := newTransport(t)
		copied, err := tr.CopyLocalObjects(ctx, remote.Path())
		sourceListed = nil
		if err != nil {
			t.Fatalf("%s: copy failed: %v", tc.name, err)
		}
		if tc.every {
			if copied || listings != copyAttempts {
				t.Fatalf("%s: copied %v after %d listings; want declined after %d (the caller fetches)", tc.name, copied, listings, copyAttempts)
			}
			left, _ := filepath.Glob(filepath.Join(dst.Path(), "objects", "pack", "tmp_pack_*"))
			if len(left) > 0 {
				t.Fatalf("%s: the declined copy left %v", tc.name, left)
			}
			continue
		}
		if !copied || listings != 2 {
			t.Fatalf("%s: copied %v after %d listings; want copied after 2", tc.name, copied, listings)
		}
		if ok, err := dst.Has(c); !ok || err != nil {
			t.Fatalf("%s: the copy lacks %s (%v)", tc.name, c, err)
		}
	}
}

// TestCopyLocalObjectsWhileSourceIsWritten: a writer of the source writes
// its objects one by one (a tree, then the commit that names it), and the
// copy's listing, which walks the fan-out directories in order, can see
// the commit and not the tree: git's index-pack --strict then fails with
// "did not receive expected object". The copy lists the source again (the
// writer is done) and copies it whole; a source whose unreachable object
// names a missing one at every listing is left to the fetch, which only
// takes what the refs reach. Before, the clone failed with a hint to fsck
// the source (5 path clones in a 150 s soak with two writers recording
// runs). Not parallel: it sets the sourceListed hook.
func TestCopyLocalObjectsWhileSourceIsWritten(t *testing.T) {
	ctx := context.Background()
	for _, forever := range []bool{false, true} {
		remote := NewTestStore(t)
		c := mkCommit(t, remote, "journal")
		mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
		// the tree a writer is about to write, and its commit, written
		// first here: what a listing that missed the tree sees
		scratch := NewTestStore(t)
		blob, _ := scratch.PutBlob([]byte("being written\n"))
		tree, err := scratch.PutTree([]TreeEntry{{Name: "f.txt", Mode: ModeFile, OID: blob}})
		if err != nil {
			t.Fatal(err)
		}
		half, err := remote.PutCommit(Commit{Tree: tree, Author: testSig(), Committer: testSig(), Message: "run\n"})
		if err != nil {
			t.Fatal(err)
		}
		if err := remote.Sync(); err != nil {
			t.Fatal(err)
		}
		objects := filepath.Join(remote.Path(), "objects")
		listings := 0
		sourceListed = func(dir string) {
			if dir != objects {
				return
			}
			listings++
			if listings == 1 && !forever {
				// the writer writes the tree the listing missed
				if _, err := remote.PutBlob([]byte("being written\n")); err != nil {
					t.Error(err)
				}
				if _, err := remote.PutTree([]TreeEntry{{Name: "f.txt", Mode: ModeFile, OID: blob}}); err != nil {
					t.Error(err)
				}
				if err := remote.Sync(); err != nil {
					t.Error(err)
				}
			}
		}
		dst, tr := newTransport(t)
		copied, err := tr.CopyLocalObjects(ctx, remote.Path())
		sourceListed = nil
		if err != nil {
			t.Fatalf("forever %v: copy failed: %v", forever, err)
		}
		if forever {
			if copied || listings != copyAttempts {
				t.Fatalf("a source with a missing object: copied %v after %d listings; want declined after %d (the caller fetches)", copied, listings, copyAttempts)
			}
			if left, _ := filepath.Glob(filepath.Join(dst.Path(), "objects", "pack", "tmp_pack_*")); len(left) > 0 {
				t.Fatalf("the declined copy left %v", left)
			}
			continue
		}
		if !copied || listings != 2 {
			t.Fatalf("copied %v after %d listings; want copied after 2", copied, listings)
		}
		for _, id := range []OID{c, half, tree} {
			if ok, err := dst.Has(id); !ok || err != nil {
				t.Fatalf("the copy lacks %s (%v)", id, err)
			}
		}
	}
}
