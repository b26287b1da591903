package gitstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// fsyncEach syncs every target, whatever order its goroutines take them
// in, and reports the error of the first failing target in the order
// given, as the one-by-one loop it replaced did; a target marked goneOK
// that no longer exists is no error.
func TestFsyncEachErrorsInOrder(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "g")
	if err := os.WriteFile(other, []byte("y"), 0o600); err != nil {
		t.Fatal(err)
	}
	open, err := os.Open(other)
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close()
	missing := func(name string) string { return filepath.Join(dir, name) }
	for round := 0; round < 50; round++ {
		var mu sync.Mutex
		seen := map[string]int{}
		syncTrace = func(path string, _ bool) {
			mu.Lock()
			seen[path]++
			mu.Unlock()
		}
		ts := []syncTarget{
			{path: file},
			{path: dir, dir: true},
			{path: missing("gone"), goneOK: true},
			{f: open},
			{path: missing("first")},
			{path: file},
			{path: missing("second"), dir: true},
			{path: missing("gone-dir"), dir: true, goneOK: true},
			{path: file},
			{path: missing("third")},
		}
		err := fsyncEach(ts)
		syncTrace = nil
		if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), missing("first")) {
			t.Fatalf("round %d: fsyncEach = %v; want the error of %s", round, err, missing("first"))
		}
		for _, tg := range ts {
			name := tg.path
			if tg.f != nil {
				name = tg.f.Name()
			}
			if seen[name] == 0 {
				t.Fatalf("round %d: %s was not synced", round, name)
			}
		}
		if seen[file] != 3 {
			t.Fatalf("round %d: %s synced %d times; want 3", round, file, seen[file])
		}
	}
	if err := fsyncEach([]syncTarget{{path: file}, {path: missing("gone"), goneOK: true}, {f: open}}); err != nil {
		t.Fatalf("fsyncEach of what exists = %v", err)
	}
	if err := fsyncEach([]syncTarget{{path: missing("alone")}}); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("fsyncEach of one missing path = %v; want ErrNotExist", err)
	}
}

// traceSyncs records every path the package's syncs report (syncTrace)
// until the test ends; taken returns what was recorded since it was last
// called. Not for parallel tests: syncTrace is the package's.
func traceSyncs(t *testing.T) (taken func() []string) {
	var mu sync.Mutex
	var synced []string
	syncTrace = func(p string, _ bool) {
		mu.Lock()
		synced = append(synced, p)
		mu.Unlock()
	}
	t.Cleanup(func() { syncTrace = nil })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		s := synced
		synced = nil
		return s
	}
}

// An Update that wrote a few objects, loose or as one small pack
// (writeSmallPack), syncs them together with its lock files (one batch:
// the lock is there when they are synced), and each one before any ref is
// renamed: objects before refs. The directory of a ref that was only
// compared (its expected value is its current one) is not synced; the
// directory of a moved ref is, after the rename.
func TestUpdateSyncsFewObjectsWithLocksBeforeRename(t *testing.T) {
	for _, loose := range []bool{true, false} {
		t.Run(map[bool]string{true: "loose", false: "small pack"}[loose], func(t *testing.T) {
			s := NewTestStore(t)
			if loose {
				looseWrites(s)
			}
			checkFewObjectsSynced(t, s, loose)
		})
	}
}

func checkFewObjectsSynced(t *testing.T, s Store, loose bool) {
	gitDir := s.Path()
	base := mkCommit(t, s, "base")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/kept/base", New: base})
	packsBefore, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*"))

	c := mkCommit(t, s, "next", base)
	var (
		mu      sync.Mutex
		synced  []string
		atSync  = map[string]string{} // path synced -> the moved ref's file then
		locked  = map[string]bool{}   // path synced -> the moved ref's lock file there then
		movedAt = filepath.Join(gitDir, "refs", "heads", "moved", "r")
	)
	syncTrace = func(path string, _ bool) {
		data, _ := os.ReadFile(movedAt)
		_, err := os.Stat(movedAt + ".lock")
		mu.Lock()
		synced = append(synced, path)
		atSync[path] = string(data)
		locked[path] = err == nil
		mu.Unlock()
	}
	defer func() { syncTrace = nil }()
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/moved/r", New: c},
		RefUpdate{Name: "refs/heads/kept/base", Old: base, New: base},
	)
	syncTrace = nil
	wantRef(t, s, "refs/heads/moved/r", c)

	var files []string // the object files the update wrote
	if loose {
		walk := []OID{c}
		for len(walk) > 0 {
			id := walk[0]
			walk = walk[1:]
			files = append(files, filepath.Join(gitDir, "objects", string(id)[:2], string(id)[2:]))
			if id == c {
				cm, err := s.Commit(c)
				if err != nil {
					t.Fatal(err)
				}
				walk = append(walk, cm.Tree)
				entries, err := s.Tree(cm.Tree)
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					walk = append(walk, e.OID)
				}
			}
		}
		if len(files) != 3 {
			t.Fatalf("checked %d objects; want the commit, its tree and its blob", len(files))
		}
	} else {
		after, _ := filepath.Glob(filepath.Join(gitDir, "objects", "pack", "pack-*"))
		for _, f := range after {
			if !slices.Contains(packsBefore, f) {
				files = append(files, f)
			}
		}
		if len(files) != 2 {
			t.Fatalf("the update made %v; want one pack and its index", files)
		}
		if loose, _ := looseAndPacks(t, gitDir); loose != 0 {
			t.Fatalf("%d loose objects; want the three in the small pack", loose)
		}
	}
	for _, path := range files {
		if _, ok := atSync[path]; !ok {
			t.Fatalf("%s was not synced by the update; synced %v", path, synced)
		}
		if atSync[path] != "" {
			t.Fatalf("%s synced after the ref was renamed (ref held %q)", path, atSync[path])
		}
		if !locked[path] {
			t.Fatalf("%s synced before the lock files were written: two waits where one does", path)
		}
	}
	lock := movedAt + ".lock"
	if v, ok := atSync[lock]; !ok || v != "" {
		t.Fatalf("lock %s synced=%v before the rename=%v; synced %v", lock, ok, v == "", synced)
	}
	movedDir := filepath.Dir(movedAt)
	if v, ok := atSync[movedDir]; !ok || v != string(c)+"\n" {
		t.Fatalf("directory %s synced=%v after the rename=%v; synced %v", movedDir, ok, v == string(c)+"\n", synced)
	}
	if _, ok := atSync[filepath.Join(gitDir, "refs", "heads", "kept")]; ok {
		t.Fatalf("directory of the compared-only ref was synced: %v", synced)
	}
}

// Init syncs every file and directory of the new repository before it is
// renamed into place (all inside the temporary directory), in one batch;
// then the directory that holds it.
func TestInitSyncsLayoutBeforeRename(t *testing.T) {
	parent := t.TempDir()
	path := filepath.Join(parent, "store")
	taken := traceSyncs(t)
	s, err := Init(path)
	synced := taken()
	syncTrace = nil
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rel := map[string]bool{}
	for _, p := range synced {
		if p == parent {
			continue // the store's name, after the rename
		}
		r, err := filepath.Rel(parent, p)
		if err != nil || !strings.HasPrefix(r, ".store.init-") {
			t.Fatalf("synced %s, outside the temporary directory", p)
		}
		_, r, _ = strings.Cut(r, string(filepath.Separator))
		rel[filepath.ToSlash(r)] = true
	}
	want := []string{"", "HEAD", "config", "description", ".gitignore", "objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags"}
	if len(rel) != len(want) {
		t.Errorf("synced %d paths; want %d: %v", len(rel), len(want), synced)
	}
	for _, w := range want {
		if !rel[w] {
			t.Errorf("%q of the new repository was not synced: %v", w, synced)
		}
	}
}
