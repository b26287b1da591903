package store

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// putTreeMaps is putTree as it was, with a map for each level: the tree
// putTreeFiles writes must be the same.
func putTreeMaps(s *Store, files map[string]gitstore.OID) (gitstore.OID, error) {
	blobs := map[string]gitstore.OID{}
	dirs := map[string]map[string]gitstore.OID{}
	for p, id := range files {
		if i := strings.IndexByte(p, '/'); i >= 0 {
			d := p[:i]
			if dirs[d] == nil {
				dirs[d] = map[string]gitstore.OID{}
			}
			dirs[d][p[i+1:]] = id
		} else {
			blobs[p] = id
		}
	}
	var entries []gitstore.TreeEntry
	for name, id := range blobs {
		if _, clash := dirs[name]; clash {
			return "", fmt.Errorf("tree path %q is both a file and a directory", name)
		}
		entries = append(entries, gitstore.TreeEntry{Name: name, Mode: gitstore.ModeFile, OID: id})
	}
	names := make([]string, 0, len(dirs))
	for d := range dirs {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		id, err := putTreeMaps(s, dirs[d])
		if err != nil {
			return "", err
		}
		entries = append(entries, gitstore.TreeEntry{Name: d, Mode: gitstore.ModeDir, OID: id})
	}
	return s.git.PutTree(entries)
}

// TestPutTreeFilesMatchesMaps (issue 14, memory): the tree written from a
// sorted list is the one the map per level wrote, for names that sort
// around the slash ('-', '.', '0'), nesting, a manifest's layout and a
// name that is both a file and a directory (same error).
func TestPutTreeFilesMatchesMaps(t *testing.T) {
	f := newFixture(t, "version = 1\n", nil)
	blob, err := f.s.git.PutBlob([]byte("x\n"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := f.s.git.PutBlob([]byte("y\n"))
	if err != nil {
		t.Fatal(err)
	}
	cases := [][]string{
		{"manifest.json"},
		{"a", "a-b/c", "a.b", "a0/x", "b/a", "b/a-b", "b/a.c/d", "b/a0", "c/d/e/f", "c/d/e-f", "c/d/e/g"},
		{"manifest.json", "content/ns/docs/d1", "content/ns/docs/d1~3", "content/ns/docs/d2@v1", "content/ns/docs/d1@v1", "content/ns-x/a"},
		{"x/y", "x", "z"},
		{"q/r/s", "q/r", "q/t"},
	}
	for _, paths := range cases {
		files := map[string]gitstore.OID{}
		for i, p := range paths {
			files[p] = blob
			if i%2 == 1 {
				files[p] = other
			}
		}
		want, werr := putTreeMaps(f.s, files)
		got, gerr := f.s.putTree(files)
		if got != want || (werr == nil) != (gerr == nil) || werr != nil && werr.Error() != gerr.Error() {
			t.Fatalf("%v: putTree %s %v, with maps %s %v", paths, got, gerr, want, werr)
		}
	}
}
