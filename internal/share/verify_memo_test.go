package share

import (
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// checkManifestUncached is checkManifestWith as it was before treeMemo:
// FileAt on the store, reading the root tree once per lookup.
func checkManifestUncached(g gitstore.Store, id gitstore.OID) (*manifest.Manifest, error) {
	c, err := g.Commit(id)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	blob, err := gitstore.FileAt(g, c.Tree, "manifest.json")
	if err != nil {
		return nil, fmt.Errorf("manifest %s: no manifest.json: %w", id, err)
	}
	data, err := g.Blob(blob)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	m, err := manifest.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("manifest %s: %w", id, err)
	}
	m.ID = string(id)
	for _, e := range m.Entries {
		if err := checkBlob(g, e.Snapshot, e.ContentHash, e.Bytes); err != nil {
			return m, fmt.Errorf("manifest %s (run %s) entry %d %s: %w", id, m.RunID, e.Position, e.URI, err)
		}
		if e.File != "" {
			inTree, err := gitstore.FileAt(g, c.Tree, e.File)
			if err != nil {
				return m, fmt.Errorf("manifest %s (run %s) entry %d %s: file %s: %w", id, m.RunID, e.Position, e.URI, e.File, err)
			}
			if inTree != gitstore.OID(e.Snapshot) {
				return m, fmt.Errorf("manifest %s (run %s) entry %d %s: tree file %s is %s, the entry records snapshot %s", id, m.RunID, e.Position, e.URI, e.File, inTree, e.Snapshot)
			}
		}
	}
	return m, nil
}

// TestCheckManifestMemoSameAnswers: reading each tree once per manifest
// gives the same verdict and the same error text as reading it per lookup,
// for a sound manifest and for forged ones: a file swapped for other bytes,
// a file missing, manifest.json missing, a file turned into a directory, a
// tree that is not there.
func TestCheckManifestMemoSameAnswers(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"a": "alpha\n", "b": "beta\n", "c": "gamma\n"})
	m := p.run(t, "r1", "a", "b", "c")
	g := p.s.Git()
	c, err := g.Commit(gitstore.OID(m.ID))
	if err != nil {
		t.Fatal(err)
	}
	other, err := g.PutBlob([]byte("forged\n"))
	if err != nil {
		t.Fatal(err)
	}
	// edit rewrites the tree at dir (a "/" path, "" for the root) with fn
	// and returns the new root.
	var edit func(tree gitstore.OID, dir []string, fn func([]gitstore.TreeEntry) []gitstore.TreeEntry) gitstore.OID
	edit = func(tree gitstore.OID, dir []string, fn func([]gitstore.TreeEntry) []gitstore.TreeEntry) gitstore.OID {
		t.Helper()
		es, err := g.Tree(tree)
		if err != nil {
			t.Fatal(err)
		}
		es = append([]gitstore.TreeEntry(nil), es...)
		if len(dir) == 0 {
			es = fn(es)
		} else {
			for i := range es {
				if es[i].Name == dir[0] {
					es[i].OID = edit(es[i].OID, dir[1:], fn)
				}
			}
		}
		id, err := g.PutTree(es)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	forge := func(path string, fn func([]gitstore.TreeEntry) []gitstore.TreeEntry) gitstore.OID {
		t.Helper()
		parts := strings.Split(path, "/")
		fc := c
		fc.Tree = edit(c.Tree, parts[:len(parts)-1], fn)
		id, err := g.PutCommit(fc)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	file := m.Entries[1].File
	if file == "" {
		t.Fatalf("manifest entries name no tree file: %+v", m.Entries)
	}
	base := file[strings.LastIndexByte(file, '/')+1:]
	sub, err := g.PutTree([]gitstore.TreeEntry{{Name: "x", Mode: gitstore.ModeFile, OID: other}})
	if err != nil {
		t.Fatal(err)
	}
	ids := []gitstore.OID{gitstore.OID(m.ID),
		forge(file, func(es []gitstore.TreeEntry) []gitstore.TreeEntry { // other bytes
			for i := range es {
				if es[i].Name == base {
					es[i].OID = other
				}
			}
			return es
		}),
		forge(file, func(es []gitstore.TreeEntry) []gitstore.TreeEntry { // missing
			var out []gitstore.TreeEntry
			for _, e := range es {
				if e.Name != base {
					out = append(out, e)
				}
			}
			return out
		}),
		forge(file, func(es []gitstore.TreeEntry) []gitstore.TreeEntry { // a directory
			for i := range es {
				if es[i].Name == base {
					es[i].OID, es[i].Mode = sub, gitstore.ModeDir
				}
			}
			return es
		}),
		forge("manifest.json", func(es []gitstore.TreeEntry) []gitstore.TreeEntry { // no manifest.json
			var out []gitstore.TreeEntry
			for _, e := range es {
				if e.Name != "manifest.json" {
					out = append(out, e)
				}
			}
			return out
		}),
	}
	missingTree := c
	missingTree.Tree = gitstore.OID(strings.Repeat("1", 40))
	if id, err := g.PutCommit(missingTree); err == nil {
		ids = append(ids, id)
	}
	// shared: the subtrees one manifest read serve the next ones (the
	// forged manifests share the sound one's subtrees but the one edited)
	shared := &snapshotFacts{m: map[string]snapshotFact{}}
	for i, id := range ids {
		_, want := checkManifestUncached(g, id)
		_, got := checkManifestWith(g, id, nil)
		_, gotFacts := checkManifestWith(g, id, &snapshotFacts{m: map[string]snapshotFact{}})
		_, gotShared := checkManifestWith(g, id, shared)
		if fmt.Sprint(got) != fmt.Sprint(want) || fmt.Sprint(gotFacts) != fmt.Sprint(want) || fmt.Sprint(gotShared) != fmt.Sprint(want) {
			t.Fatalf("manifest %d: uncached %v; memo %v; memo with facts %v; with shared facts %v", i, want, got, gotFacts, gotShared)
		}
		if (i == 0) != (want == nil) {
			t.Fatalf("manifest %d: verdict %v (file %q)", i, want, file)
		}
	}
	if len(shared.trees) == 0 {
		t.Fatal("no subtree shared")
	}
}
