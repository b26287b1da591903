package gitstore

import (
	"testing"
)

// TestTreeEditorMatchesFreshTree: edits on a stored tree give the tree a
// writer building from scratch gives, untouched subtrees keep their ids,
// and setting a path to the blob it already names writes nothing.
func TestTreeEditorMatchesFreshTree(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	blob := func(b string) OID {
		id, err := s.PutBlob([]byte(b))
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	a, b, c := blob("a\n"), blob("b\n"), blob("c\n")
	ed := NewTreeEditor(s, "")
	for _, p := range [][]string{{"x", "one"}, {"x", "y", "two"}, {"z", "three"}} {
		if err := ed.Set(a, p...); err != nil {
			t.Fatal(err)
		}
	}
	root, err := ed.Write()
	if err != nil {
		t.Fatal(err)
	}
	_, zBefore, _ := NewTreeEditor(s, root).Lookup("z")

	ed = NewTreeEditor(s, root)
	if err := ed.Set(a, "x", "one"); err != nil { // unchanged
		t.Fatal(err)
	}
	if same, err := ed.Write(); err != nil || same != root {
		t.Fatalf("setting a path to its own blob: root %s, want %s (%v)", same, root, err)
	}
	ed = NewTreeEditor(s, root)
	if err := ed.Set(b, "x", "y", "two"); err != nil {
		t.Fatal(err)
	}
	if err := ed.Set(c, "x", "new"); err != nil {
		t.Fatal(err)
	}
	edited, err := ed.Write()
	if err != nil {
		t.Fatal(err)
	}

	fresh := NewTreeEditor(s, "")
	for _, e := range []struct {
		id   OID
		path []string
	}{{a, []string{"x", "one"}}, {b, []string{"x", "y", "two"}}, {a, []string{"z", "three"}}, {c, []string{"x", "new"}}} {
		if err := fresh.Set(e.id, e.path...); err != nil {
			t.Fatal(err)
		}
	}
	want, err := fresh.Write()
	if err != nil {
		t.Fatal(err)
	}
	if edited != want {
		t.Fatalf("edited tree %s, fresh tree %s", edited, want)
	}
	_, zAfter, _ := NewTreeEditor(s, edited).Lookup("z")
	if zAfter != zBefore {
		t.Fatalf("untouched subtree z changed: %s -> %s", zBefore, zAfter)
	}
	hashed := NewTreeHasher(s, root)
	if err := hashed.Set(b, "x", "y", "two"); err != nil {
		t.Fatal(err)
	}
	if err := hashed.Set(c, "x", "new"); err != nil {
		t.Fatal(err)
	}
	if h, err := hashed.Write(); err != nil || h != edited {
		t.Fatalf("hashed tree %s, written %s (%v)", h, edited, err)
	}
}

// TestTreeEditorRefusesClashes: a file cannot become a directory or the
// reverse, and names git refuses stay refused.
func TestTreeEditorRefusesClashes(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	id, err := s.PutBlob([]byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	ed := NewTreeEditor(s, "")
	if err := ed.Set(id, "a", "b"); err != nil {
		t.Fatal(err)
	}
	if err := ed.Set(id, "a"); err == nil {
		t.Fatal("a directory was replaced by a file")
	}
	if err := ed.Set(id, "a", "b", "c"); err == nil {
		t.Fatal("a file was used as a directory")
	}
	if err := ed.Set(id, ".git", "x"); err == nil {
		t.Fatal(".git accepted")
	}
	// The null id names no object (FuzzViewManifest found it accepted by
	// Set and refused only by Write).
	if err := ed.Set("0000000000000000000000000000000000000000", "null"); err == nil {
		t.Fatal("the null id accepted")
	}
	if m, _, err := ed.Lookup("a", "b"); err != nil || m != ModeFile {
		t.Fatalf("lookup a/b: mode %o, %v", m, err)
	}
	if m, _, err := ed.Lookup("a", "zzz"); err != nil || m != 0 {
		t.Fatalf("lookup a/zzz: mode %o, %v", m, err)
	}
	empty, err := NewTreeEditor(s, "").Write()
	if err != nil || empty != "4b825dc642cb6eb9a060e54bf8d69288fbee4904" {
		t.Fatalf("empty editor wrote %s (%v)", empty, err)
	}
}
