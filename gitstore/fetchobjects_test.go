package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestFetchObjectsInRefView: FetchObjects runs git in a ref view of the
// store (its branches only, its config included): a remote configured
// only in the store's config, through a URL rule set there too, is
// fetched from; the objects land in the store; no ref of the store
// changes and the view is gone afterwards.
func TestFetchObjectsInRefView(t *testing.T) {
	ctx := context.Background()
	s, tr := newTransport(t)
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	remote := NewTestStore(t)
	c := mkCommit(t, remote, "from the remote")
	if err := remote.Sync(); err != nil {
		t.Fatal(err)
	}
	git(t, remote.Path(), "update-ref", "refs/heads/main", string(c))
	mine := mkCommit(t, s, "mine")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	git(t, s.Path(), "update-ref", "refs/heads/main", string(mine))
	git(t, s.Path(), "update-ref", "refs/tags/readproof/runs/r1", string(mine))
	git(t, s.Path(), "config", "remote.o.url", "alias:")
	git(t, s.Path(), "config", "url."+remote.Path()+".insteadOf", "alias:")
	before := git(t, s.Path(), "for-each-ref")
	if err := tr.FetchObjects(ctx, "o", []OID{c}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, s.Path(), "cat-file", "-t", string(c)); got != "commit" {
		t.Fatalf("fetched commit in the store: %q", got)
	}
	if after := git(t, s.Path(), "for-each-ref"); after != before {
		t.Fatalf("refs changed:\n%s\nto\n%s", before, after)
	}
	left, err := os.ReadDir(tmp)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range left {
		if m, _ := filepath.Match("readproof-fetch-*", e.Name()); m {
			t.Fatalf("ref view left behind: %s", e.Name())
		}
	}
}

// TestRefsMergesLooseIntoPacked: Refs lists packed-refs in its order with
// the loose refs merged in (a loose ref over its packed line), sorted by
// name, and a file that says it is sorted but is not (or repeats a name)
// is still listed sorted, the first line of a name counting.
func TestRefsMergesLooseIntoPacked(t *testing.T) {
	s := NewTestStore(t)
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	packed := "# pack-refs with: peeled fully-peeled sorted \n" +
		string(a) + " refs/tags/x/c\n" +
		string(a) + " refs/tags/x/a\n" +
		string(a) + " refs/tags/x/e\n" +
		string(b) + " refs/tags/x/e\n"
	if err := os.WriteFile(filepath.Join(s.Path(), "packed-refs"), []byte(packed), 0o600); err != nil {
		t.Fatal(err)
	}
	git(t, s.Path(), "update-ref", "refs/tags/x/b", string(b))
	if err := os.WriteFile(filepath.Join(s.Path(), "refs", "tags", "x", "c"), []byte(string(b)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	refs, err := s.Refs("refs/tags/x/")
	if err != nil {
		t.Fatal(err)
	}
	want := []Ref{{Name: "refs/tags/x/a", OID: a}, {Name: "refs/tags/x/b", OID: b}, {Name: "refs/tags/x/c", OID: b}, {Name: "refs/tags/x/e", OID: a}}
	if len(refs) != len(want) {
		t.Fatalf("Refs = %v, want %v", refs, want)
	}
	for i := range want {
		if refs[i] != want[i] {
			t.Fatalf("Refs = %v, want %v", refs, want)
		}
	}
}
