package storecheck_test

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestCheckJournalView: with --read-data, verify recomputes the journal's
// document view and reports a main whose tree is not that view as broken,
// naming `readproof migrate`, which writes the right view; a tree that is
// not a view at all is broken without --read-data too.
func TestCheckJournalView(t *testing.T) {
	p := newProject(t, map[string]string{"a.md": "a v1\n", "b.md": "b v1\n"}, "")
	p.run(t, "r1", uriOf("a.md"), uriOf("b.md"))
	writeFile(t, p.dir+"/a.md", "a v2\n")
	p.run(t, "r2", uriOf("a.md"))
	if rep := p.check(t, storecheck.Options{ReadData: true}); len(find(rep, storecheck.Broken)) != 0 || len(find(rep, storecheck.Warning)) != 0 {
		t.Fatalf("a fresh store: %s", problems(rep))
	}

	g := p.s.Git()
	tip, err := g.Ref(store.JournalRef)
	if err != nil {
		t.Fatal(err)
	}
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	b, err := gitstore.FileAt(g, c.Tree, "documents/demo/b")
	if err != nil {
		t.Fatal(err)
	}
	ed := gitstore.NewTreeEditor(g, c.Tree)
	if err := ed.Set(b, "documents", "demo", "a"); err != nil {
		t.Fatal(err)
	}
	forged, err := ed.Write()
	if err != nil {
		t.Fatal(err)
	}
	move := func(tree gitstore.OID) {
		t.Helper()
		old, err := g.Ref(store.JournalRef)
		if err != nil {
			t.Fatal(err)
		}
		j, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{old}, Author: sig(), Committer: sig(), Message: "rebuild journal view\n"})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.Update(gitstore.RefUpdate{Name: store.JournalRef, Old: old, New: j}); err != nil {
			t.Fatal(err)
		}
	}
	move(forged)
	rep := p.check(t, storecheck.Options{ReadData: true})
	if got := find(rep, storecheck.Broken, "is not the view of the runs it records", "readproof migrate"); len(got) != 1 {
		t.Fatalf("forged view: %s", problems(rep))
	}
	if got := find(p.check(t, storecheck.Options{}), storecheck.Broken); len(got) != 0 {
		t.Fatalf("without --read-data the view is not recomputed: %v", got)
	}

	res, err := p.s.Migrate()
	if err != nil || !res.Changed || res.Runs != 2 {
		t.Fatalf("migrate: %+v (%v)", res, err)
	}
	if rep := p.check(t, storecheck.Options{ReadData: true}); len(find(rep, storecheck.Broken)) != 0 {
		t.Fatalf("after migrate: %s", problems(rep))
	}

	// A tree with something besides documents/ and run.json is no journal.
	stray := putFiles(t, g, map[string]gitstore.OID{"run.json": b, "notes.txt": b})
	move(stray)
	rep = p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, `holds "notes.txt"`); len(got) != 1 || !strings.Contains(got[0].Message, "readproof journal") {
		t.Fatalf("stray tree: %s", problems(rep))
	}
}
