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
		remote := NewTestStore(t)
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
