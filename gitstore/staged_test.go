//go:build unix

package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestInitStaged: a staged store is made in .NAME.clone beside its path,
// with nothing at the path until Publish renames it there whole (over an
// empty directory too, in one rename: the store then has a new store's
// mode), and Discard leaves nothing. A second InitStaged for the same
// path while the first holds its staging directory fails with
// ErrStagingBusy and leaves the first's work alone; a staging directory
// nobody holds is taken for a killed clone's and removed only once older
// than the stale-lock age; something else by that name is refused.
func TestInitStaged(t *testing.T) {
	t.Parallel()
	opts := Options{StaleLockAge: time.Hour}
	t.Run("publish", func(t *testing.T) {
		t.Parallel()
		for _, given := range []bool{false, true} {
			path := filepath.Join(t.TempDir(), "store")
			if given {
				if err := os.Mkdir(path, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			s, err := InitStaged(path, opts)
			if err != nil {
				t.Fatal(err)
			}
			if s.Path() != StagingDir(path) {
				t.Fatalf("staged store at %s, want %s", s.Path(), StagingDir(path))
			}
			mkCommitRef(t, s.Store, "refs/heads/main")
			if IsStore(path) {
				t.Fatal("the store is at its path before Publish")
			}
			// a second clone into the same path, meanwhile
			if _, err := InitStaged(path, opts); !errors.Is(err, ErrStagingBusy) {
				t.Fatalf("a second InitStaged while the first is under way: %v, want ErrStagingBusy", err)
			}
			if !IsStore(StagingDir(path)) {
				t.Fatal("the second InitStaged touched the first's staging directory")
			}
			if err := s.Publish(); err != nil {
				t.Fatal(err)
			}
			s.Discard() // after Publish: nothing to do
			if _, err := os.Stat(StagingDir(path)); !os.IsNotExist(err) {
				t.Fatalf("the staging directory is still there after Publish (%v)", err)
			}
			g, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := g.Ref("refs/heads/main"); err != nil {
				t.Fatalf("the published store: %v", err)
			}
			g.Close()
			if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o700 {
				t.Fatalf("the published store: %v, mode %v, want 700", err, fi.Mode().Perm())
			}
			if _, err := InitStaged(path, opts); !errors.Is(err, ErrExists) {
				t.Fatalf("InitStaged over the published store: %v, want ErrExists", err)
			}
		}
	})
	t.Run("discard", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "store")
		if err := os.Mkdir(path, 0o750); err != nil {
			t.Fatal(err)
		}
		s, err := InitStaged(path, opts)
		if err != nil {
			t.Fatal(err)
		}
		s.Discard()
		entries, _ := os.ReadDir(filepath.Dir(path))
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o750 || len(entries) != 1 {
			t.Fatalf("after Discard: %v, %d entries beside, want the empty directory given (750) alone", err, len(entries))
		}
	})
	t.Run("left", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "store")
		staging := StagingDir(path)
		// what a clone killed mid-way leaves: a staging directory nobody
		// holds, with a partial store in it
		if err := os.MkdirAll(filepath.Join(staging, "objects", "pack"), 0o700); err != nil {
			t.Fatal(err)
		}
		if _, err := InitStaged(path, opts); !errors.Is(err, ErrStagingBusy) {
			t.Fatalf("InitStaged beside a staging directory younger than the stale-lock age: %v, want ErrStagingBusy", err)
		}
		old := time.Now().Add(-2 * time.Hour)
		if err := os.Chtimes(staging, old, old); err != nil {
			t.Fatal(err)
		}
		s, err := InitStaged(path, opts)
		if err != nil {
			t.Fatalf("InitStaged beside a stale staging directory: %v", err)
		}
		if err := s.Publish(); err != nil {
			t.Fatal(err)
		}
		if !IsStore(path) {
			t.Fatal("no store after Publish")
		}
	})
	t.Run("in the way", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "store")
		if err := os.WriteFile(StagingDir(path), []byte("mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		old := time.Now().Add(-2 * time.Hour)
		os.Chtimes(StagingDir(path), old, old)
		if _, err := InitStaged(path, opts); !errors.Is(err, ErrStagingInTheWay) {
			t.Fatalf("InitStaged beside a file by the staging directory's name: %v, want ErrStagingInTheWay", err)
		}
		if data, err := os.ReadFile(StagingDir(path)); err != nil || string(data) != "mine\n" {
			t.Fatalf("the file in the way was changed: %q, %v", data, err)
		}
		if _, err := os.Stat(path); !os.IsNotExist(err) {
			t.Fatalf("something is at the path (%v)", err)
		}
	})
}

// TestStagingSweepLeavesOthersDirectories: a directory by the staging
// directory's name that is not what a killed clone leaves (a directory of
// the user's holding other files, or one another user owns, as in a shared
// /tmp) is never removed, however old: InitStaged fails with
// ErrStagingInTheWay and leaves it as it is.
func TestStagingSweepLeavesOthersDirectories(t *testing.T) {
	t.Parallel()
	old := time.Now().Add(-2 * time.Hour)
	opts := Options{StaleLockAge: time.Hour}
	t.Run("other files", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "store")
		staging := StagingDir(path)
		if err := os.Mkdir(staging, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(staging, "notes.txt"), []byte("mine\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(staging, old, old)
		if _, err := InitStaged(path, opts); !errors.Is(err, ErrStagingInTheWay) {
			t.Fatalf("InitStaged beside a directory of other files by the staging name: %v, want ErrStagingInTheWay", err)
		}
		if data, err := os.ReadFile(filepath.Join(staging, "notes.txt")); err != nil || string(data) != "mine\n" {
			t.Fatalf("the directory in the way was changed: %q, %v", data, err)
		}
	})
	t.Run("another user's", func(t *testing.T) {
		t.Parallel()
		if os.Geteuid() != 0 {
			t.Skip("needs root to give the directory to another user")
		}
		path := filepath.Join(t.TempDir(), "store")
		staging := StagingDir(path)
		if err := os.MkdirAll(filepath.Join(staging, "objects"), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(staging, 65534, 65534); err != nil {
			t.Skipf("chown: %v", err)
		}
		os.Chtimes(staging, old, old)
		if _, err := InitStaged(path, opts); !errors.Is(err, ErrStagingInTheWay) {
			t.Fatalf("InitStaged beside another user's staging directory: %v, want ErrStagingInTheWay", err)
		}
		if _, err := os.Stat(filepath.Join(staging, "objects")); err != nil {
			t.Fatalf("another user's directory was changed: %v", err)
		}
	})
}

// mkCommitRef writes a commit and points ref at it.
func mkCommitRef(t *testing.T, s Store, ref string) {
	t.Helper()
	mustUpdate(t, s, RefUpdate{Name: ref, New: mkCommit(t, s, "x")})
}

// TestPublishLosesToAnotherStore: a store made at the path by another
// process (an init, another clone) while the staged one was being made
// wins: Publish fails with ErrExists, not ErrPublishedUnsynced (the staged
// store is not in place), Discard removes the staging directory and the
// other store is left as it is.
func TestPublishLosesToAnotherStore(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "store")
	s, err := InitStaged(path, Options{StaleLockAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	mkCommitRef(t, s.Store, "refs/heads/staged")
	other, err := InitWithOptions(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mkCommitRef(t, other, "refs/heads/other")
	other.Close()
	err = s.Publish()
	if !errors.Is(err, ErrExists) || errors.Is(err, ErrPublishedUnsynced) {
		t.Fatalf("Publish over another store: %v, want ErrExists (and not ErrPublishedUnsynced)", err)
	}
	s.Discard()
	if _, err := os.Stat(StagingDir(path)); !os.IsNotExist(err) {
		t.Fatalf("the staging directory is left (%v)", err)
	}
	g, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Ref("refs/heads/other"); err != nil {
		t.Fatalf("the other store lost its ref: %v", err)
	}
	if _, err := g.Ref("refs/heads/staged"); err == nil {
		t.Fatal("the staged store's ref is in the other store")
	}
}

// TestLockSameDirRefusesAReplacement: the sweep of a killed clone's
// staging directory locks it and then checks that it is still the
// directory it looked at (and judges its age there): one that another
// clone made by that name since (after removing the old one) is not taken
// for the old one, so a fresh clone's directory is never removed as stale.
func TestLockSameDirRefusesAReplacement(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), ".store.clone")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour)
	os.Chtimes(dir, old, old)
	seen, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if release, cur, ok := lockSameDir(dir, seen); !ok || !cur.ModTime().Equal(seen.ModTime()) {
		t.Fatalf("the directory looked at: ok %v", ok)
	} else {
		release()
	}
	// another clone removes it and makes its own by that name
	if err := os.Remove(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if release, _, ok := lockSameDir(dir, seen); ok {
		release()
		t.Fatal("a directory made by the same name since was taken for the one looked at")
	}
	// and while another process holds a directory's lock, it is not taken
	now, err := os.Lstat(dir)
	if err != nil {
		t.Fatal(err)
	}
	hold, err := holdScratch(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer hold()
	if release, _, ok := lockSameDir(dir, now); ok {
		release()
		t.Fatal("a directory whose lock is held was taken")
	}
}

// TestStagedSyncedAtPublish: InitStaged lays the store out without
// syncing it (nothing reads the staging directory as a store), and Publish
// syncs every file and directory in it, those InitStaged wrote included,
// before the rename; Init (a store made in place) still syncs its layout
// when it makes it. Not parallel: syncTrace is the package's.
func TestStagedSyncedAtPublish(t *testing.T) {
	taken := traceSyncs(t)
	path := filepath.Join(t.TempDir(), "store")
	st, err := InitStaged(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if s := taken(); len(s) != 0 {
		t.Errorf("InitStaged synced %v; want nothing before Publish", s)
	}
	var layout []string
	if err := filepath.WalkDir(StagingDir(path), func(p string, _ fs.DirEntry, err error) error {
		layout = append(layout, p)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := st.Publish(); err != nil {
		t.Fatal(err)
	}
	s := taken()
	for _, p := range layout {
		if !slices.Contains(s, p) {
			t.Errorf("Publish did not sync %s; synced %v", p, s)
		}
	}
	in := filepath.Join(t.TempDir(), "in-place")
	g, err := InitWithOptions(in, Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	s = taken()
	for _, name := range []string{"HEAD", "config", "objects", "refs"} {
		if !slices.ContainsFunc(s, func(p string) bool { return filepath.Base(p) == name }) {
			t.Errorf("Init did not sync its %s; synced %v", name, s)
		}
	}
}

// TestStagedPublishSyncsMadeParents: a clone into a path whose parents it
// made (a/b/store, a missing) makes their names durable too: the directory
// that holds each one it made is synced once the store is in place, or a
// crash may lose a, and the published store with it.
func TestStagedPublishSyncsMadeParents(t *testing.T) {
	taken := traceSyncs(t)
	top := t.TempDir()
	path := filepath.Join(top, "a", "b", "store")
	st, err := InitStaged(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Publish(); err != nil {
		t.Fatal(err)
	}
	want := func(what string) {
		synced := taken()
		for _, d := range []string{filepath.Join(top, "a", "b"), filepath.Join(top, "a"), top} {
			if !slices.Contains(synced, d) {
				t.Errorf("%s did not sync %s, which holds a directory it made (or the store); synced %v", what, d, synced)
			}
		}
	}
	want("Publish")
	top = t.TempDir()
	g, err := InitWithOptions(filepath.Join(top, "a", "b", "store"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	g.Close()
	want("Init")
}

// TestStagedRefsSyncedAtPublish: the refs a clone writes into its staging
// directory (Staged.WriteNewRefs) are not synced there, but by Publish,
// with everything else, before the rename; WriteNewRefs into a store in
// place syncs packed-refs and its directory before it returns. Not
// parallel: syncTrace is the package's.
func TestStagedRefsSyncedAtPublish(t *testing.T) {
	taken := traceSyncs(t)
	path := filepath.Join(t.TempDir(), "store")
	st, err := InitStaged(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := mkCommit(t, st.Store, "a")
	if err := st.Store.Sync(); err != nil {
		t.Fatal(err)
	}
	taken()
	refs := []Ref{{Name: "refs/heads/main", OID: a}, {Name: "refs/tags/readproof/runs/r1", OID: a}}
	if err := st.WriteNewRefs(refs); err != nil {
		t.Fatal(err)
	}
	packed := filepath.Join(StagingDir(path), "packed-refs")
	if s := taken(); len(s) != 0 {
		t.Errorf("Staged.WriteNewRefs synced %v; want nothing before Publish", s)
	}
	if err := st.Publish(); err != nil {
		t.Fatal(err)
	}
	if s := taken(); !slices.Contains(s, packed) || !slices.Contains(s, StagingDir(path)) {
		t.Errorf("Publish did not sync %s and its directory; synced %v", packed, s)
	}
	placed, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer placed.Close()
	wantRef(t, placed, "refs/tags/readproof/runs/r1", a)

	g := NewTestStore(t)
	b := mkCommit(t, g, "b")
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	taken()
	if err := WriteNewRefs(g, []Ref{{Name: "refs/heads/main", OID: b}}); err != nil {
		t.Fatal(err)
	}
	s := taken()
	for _, p := range []string{filepath.Join(g.Path(), "packed-refs.lock"), g.Path()} {
		if !slices.Contains(s, p) {
			t.Errorf("WriteNewRefs did not sync %s; synced %v", p, s)
		}
	}
}
