package storecheck_test

import (
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/identity"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestObservationMergeTreeExtra: a merge on a resource chain (which verify
// does not read as an observation of its own) whose tree holds a file
// beside content, observation.json and resource.json is broken too: `git
// show` of the chain displays that file with the merge.
func TestObservationMergeTreeExtra(t *testing.T) {
	p := newProject(t, map[string]string{"a.md": "a v1\n"}, "")
	p.run(t, "r1", uriOf("a.md"))
	writeFile(t, p.dir+"/a.md", "a v2\n")
	p.run(t, "r2", uriOf("a.md"))
	if rep := p.check(t, storecheck.Options{}); len(find(rep, storecheck.Broken)) != 0 {
		t.Fatalf("a fresh store: %s", problems(rep))
	}
	g := p.s.Git()
	u, err := identity.ParseURI(uriOf("a.md"))
	if err != nil {
		t.Fatal(err)
	}
	ref := store.ResourcesPrefix + u.Key()
	tip, err := g.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := g.Tree(c.Tree)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]gitstore.OID{"NOTES.md": entries[0].OID}
	for _, e := range entries {
		files[e.Name] = e.OID
	}
	tree := putFiles(t, g, files)
	m, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip, c.Parents[0]}, Author: sig(), Committer: sig(), Message: "merge observations\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: m}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, "tree entry NOTES.md is not part of the observation"); len(got) != 1 || got[0].Object != string(m) {
		t.Fatalf("merge with a planted file: %s", problems(rep))
	}
}
