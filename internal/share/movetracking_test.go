package share

import (
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestMoveTrackingNeverBackwards: a pull whose tracking refs another pull
// of the same remote moved after it read them (a ref moved, one made, one
// deleted) leaves each of those as that pull wrote it, and moves only the
// refs nobody touched meanwhile. Before, its retry wrote its own listing
// over them, which may be the older one: runs/r-x went back to r-3, r-new
// was deleted and r-gone made again.
func TestMoveTrackingNeverBackwards(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"a": "one\n", "b": "two\n", "c": "three\n"})
	p.run(t, "r-1", "a")
	p.run(t, "r-2", "b")
	p.run(t, "r-3", "c")
	g := p.s.Git()
	oid := func(run string) gitstore.OID {
		return gitstore.OID(git(t, p.path(), "rev-parse", store.RunsPrefix+run))
	}
	o1, o2, o3 := oid("r-1"), oid("r-2"), oid("r-3")
	base := RemotesPrefix + "origin/runs/"
	if err := g.Update(gitstore.RefUpdate{Name: base + "r-x", New: o1}, gitstore.RefUpdate{Name: base + "r-gone", New: o1}); err != nil {
		t.Fatal(err)
	}
	read, err := g.Refs(RemotesPrefix + "origin/")
	if err != nil {
		t.Fatal(err)
	}
	// the other pull, listing the remote after this one did
	if err := g.Update(gitstore.RefUpdate{Name: base + "r-x", Old: o1, New: o2}, gitstore.RefUpdate{Name: base + "r-new", New: o2},
		gitstore.RefUpdate{Name: base + "r-gone", Old: o1}); err != nil {
		t.Fatal(err)
	}
	listed := []gitstore.Ref{{Name: store.RunsPrefix + "r-gone", OID: o1}, {Name: store.RunsPrefix + "r-keep", OID: o3}, {Name: store.RunsPrefix + "r-x", OID: o3}}
	if err := moveTracking(g, "origin", listed, read); err != nil {
		t.Fatal(err)
	}
	want := base + "r-keep " + string(o3) + "\n" + base + "r-new " + string(o2) + "\n" + base + "r-x " + string(o2)
	if got := git(t, p.path(), "for-each-ref", "--format=%(refname) %(objectname)", RemotesPrefix+"origin/"); got != want {
		t.Errorf("tracking refs after a pull moved them meanwhile:\n%s\nwant\n%s", got, want)
	}
}
