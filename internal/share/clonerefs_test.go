package share

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestCloneWritesRefsPacked: a clone writes its refs as one packed-refs file
// (no loose ref file per ref, issue 14), and they are exactly the refs a
// git fetch with the clone's refspecs writes.
func TestCloneWritesRefsPacked(t *testing.T) {
	t.Parallel()
	needGit(t)
	base := t.TempDir()
	dir := bareServer(t, base, "s.git")
	importRuns(t, dir, 0, 30)
	dst := filepath.Join(t.TempDir(), "clone")
	if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	var loose []string
	filepath.WalkDir(filepath.Join(dst, "refs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			loose = append(loose, p)
		}
		return nil
	})
	if len(loose) > 0 {
		t.Errorf("loose ref files after clone: %v", loose)
	}
	// written in one go by gitstore.WriteNewRefs, not by git fetch and a
	// git pack-refs pass over one loose file per ref
	if data, err := os.ReadFile(filepath.Join(dst, "packed-refs")); err != nil || !strings.HasPrefix(string(data), "# pack-refs with: sorted \n") {
		t.Errorf("packed-refs not written by WriteNewRefs: %v %.60q", err, data)
	}
	got := strings.TrimSpace(gitOut(t, dst, "", "for-each-ref", "--format=%(objectname) %(refname)"))
	// stock git fetch of the same refspecs into an empty repository
	ref := filepath.Join(t.TempDir(), "ref.git")
	gitOut(t, "", "", "init", "-q", "--bare", ref)
	args := append([]string{"fetch", "-q", "--no-tags", dir}, cloneSpecs()...)
	gitOut(t, ref, "", args...)
	want := strings.TrimSpace(gitOut(t, ref, "", "for-each-ref", "--format=%(objectname) %(refname)"))
	if got != want {
		t.Errorf("clone refs:\n%s\nwant (git fetch):\n%s", got, want)
	}
	gitstore.Fsck(t, dst)
}

// cloneSpecs are the refspecs whose effect cloneRefs reproduces.
func cloneSpecs() []string {
	specs := fetchRefspecs("origin")
	for _, p := range []string{"refs/tags/readproof/runs/", "refs/heads/readproof/resources/", "refs/heads/readproof/tags/", "refs/heads/readproof/receipts/", "refs/heads/readproof/verdicts/"} {
		specs = append(specs, "+"+p+"*:"+p+"*")
	}
	return append(specs, "+refs/heads/main:refs/heads/main")
}

func TestMapRefspec(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ spec, name, want string }{
		{"+refs/tags/readproof/runs/*:refs/readproof-remotes/o/runs/*", "refs/tags/readproof/runs/a", "refs/readproof-remotes/o/runs/a"},
		{"+refs/tags/readproof/runs/*:refs/readproof-remotes/o/runs/*", "refs/tags/readproof/runsx", ""},
		{"+refs/heads/main*:refs/readproof-remotes/o/main*", "refs/heads/main", "refs/readproof-remotes/o/main"},
		{"+refs/heads/main*:refs/readproof-remotes/o/main*", "refs/heads/main-2", "refs/readproof-remotes/o/main-2"},
		{"+refs/heads/main:refs/heads/main", "refs/heads/main", "refs/heads/main"},
		{"+refs/heads/main:refs/heads/main", "refs/heads/mainx", ""},
		{"refs/heads/a", "refs/heads/a", ""},
	} {
		got, ok := mapRefspec(c.spec, c.name)
		if !ok {
			got = ""
		}
		if got != c.want {
			t.Errorf("mapRefspec(%q, %q) = %q, want %q", c.spec, c.name, got, c.want)
		}
	}
	refs := cloneRefs([]gitstore.Ref{{Name: "refs/heads/main", OID: "a"}, {Name: "refs/heads/readproof/proposals/k/t/n", OID: "b"}})
	var names []string
	for _, r := range refs {
		names = append(names, r.Name)
	}
	sort.Strings(names)
	if strings.Join(names, " ") != "refs/heads/main refs/readproof-remotes/origin/main refs/readproof-remotes/origin/proposals/k/t/n" {
		t.Errorf("cloneRefs: %v", names)
	}
}

// TestPullTrackingRefsFromListing: a pull moves the tracking refs to what
// the remote listed, as git fetch --prune with the remote's refspecs would:
// new refs created, moved refs moved, refs gone from the remote removed.
func TestPullTrackingRefsFromListing(t *testing.T) {
	t.Parallel()
	needGit(t)
	base := t.TempDir()
	dir := bareServer(t, base, "s.git")
	importRuns(t, dir, 0, 20)
	gitOut(t, dir, "", "update-ref", "refs/heads/readproof/proposals/x/t/p1", "refs/tags/readproof/runs/run-00003")
	dst := filepath.Join(t.TempDir(), "clone")
	if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	importRuns(t, dir, 20, 15)
	gitOut(t, dir, "", "update-ref", "-d", "refs/heads/readproof/proposals/x/t/p1")
	s, err := store.Open(dst, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := Pull(context.Background(), s, "origin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NewRuns) != 15 {
		t.Fatalf("pulled %d runs, want 15", len(res.NewRuns))
	}
	got := gitOut(t, dst, "", "for-each-ref", "--format=%(objectname) %(refname)", RemotesPrefix+"origin/")
	ref := filepath.Join(t.TempDir(), "ref.git")
	gitOut(t, "", "", "init", "-q", "--bare", ref)
	gitOut(t, ref, "", append([]string{"fetch", "-q", "--no-tags", dir}, fetchRefspecs("origin")...)...)
	want := gitOut(t, ref, "", "for-each-ref", "--format=%(objectname) %(refname)", RemotesPrefix+"origin/")
	if got != want {
		t.Errorf("tracking refs after pull:\n%s\nwant (git fetch):\n%s", got, want)
	}
	gitstore.Fsck(t, dst)
}

// mapRefspec applies one fetch refspec ("+SRC:DST") to a remote ref name.
func mapRefspec(spec, name string) (string, bool) {
	r, ok := parseRefspec(spec)
	if !ok {
		return "", false
	}
	return r.apply(name)
}
