package share

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/store"
)

// projectRemote makes an ordinary project repository with one commit on
// main and returns a bare clone of it under base (issue 12.1).
func projectRemote(t *testing.T, base, name string) string {
	t.Helper()
	work := filepath.Join(t.TempDir(), "proj")
	git(t, "", "init", "--quiet", "--initial-branch=main", work)
	writeFile(t, filepath.Join(work, "README.md"), "a project\n")
	git(t, "", "-C", work, "add", "README.md")
	git(t, "", "-C", work, "commit", "--quiet", "-m", "first")
	dir := filepath.Join(base, name)
	git(t, "", "clone", "--quiet", "--bare", work, dir)
	return dir
}

// TestForeignRemoteRefused: a project's repository added as a remote is
// neither merged by pull nor overwritten by push nor cloned; its main is
// untouched and nothing of it reaches the store.
func TestForeignRemoteRefused(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := projectRemote(t, base, "projremote.git")
	before := allRefs(t, dir)
	d := startDaemon(t, base)
	h := startHTTP(t, base)
	for name, u := range map[string]string{"path": dir, "daemon": d.url("projremote.git"), "http": h + "/projremote.git"} {
		t.Run(name, func(t *testing.T) {
			p := newProject(t, map[string]string{"a": "alpha\n"})
			p.run(t, "r1", "a")
			addRemote(t, p, "project", u)
			ctx := context.Background()
			objects := git(t, p.path(), "count-objects", "-v")
			_, err := Pull(ctx, p.s, "project", Options{})
			if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "pull project") {
				t.Fatalf("pull from a project repository: %v, want ErrNotStore naming the remote", err)
			}
			_, err = Push(ctx, p.s, "project", Options{})
			if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "push project") {
				t.Fatalf("push to a project repository: %v, want ErrNotStore naming the remote", err)
			}
			if got := allRefs(t, dir); got != before {
				t.Fatalf("the project's refs changed:\n%s\nwant\n%s", got, before)
			}
			if got := git(t, p.path(), "count-objects", "-v"); got != objects {
				t.Errorf("objects of the project reached the store:\n%s\nwas\n%s", got, objects)
			}
			if refs := git(t, p.path(), "for-each-ref", RemotesPrefix); refs != "" {
				t.Errorf("tracking refs of a foreign remote: %s", refs)
			}
			if _, err := Clone(ctx, u, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrNotStore) {
				t.Fatalf("clone of a project repository: %v, want ErrNotStore", err)
			}
		})
	}
	// A project with more than main is refused from the ref listing alone.
	// (the tag made in the remote itself: a clone, a tag and a push gave
	// it the same ref)
	git(t, dir, "tag", "v1.0", "refs/heads/main")
	p := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, p, "project", dir)
	if _, err := Pull(context.Background(), p.s, "project", Options{}); !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "refs/tags/v1.0") {
		t.Fatalf("pull from a project with a tag: %v", err)
	}
}

// TestStoreRemoteRecognised: an empty remote takes a push; a remote holding
// only a store's first journal commit is recognised by fetching its tip
// alone; an old store whose root commit has no marker trailer is too.
func TestStoreRemoteRecognised(t *testing.T) {
	t.Parallel()
	srv := servers(t)
	u, dir := srv["daemon"]("store.git")
	a := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, a, "origin", u)
	mustPush(t, a, "origin") // only main: the initial journal commit
	if msg := git(t, dir, "log", "-1", "--format=%B", "main"); !strings.Contains(msg, StoreMarker) {
		t.Fatalf("the journal's root commit lacks the marker: %q", msg)
	}
	b := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, b, "origin", u)
	mustPull(t, b, "origin")

	// An old store: its root commit has no trailer.
	old := bareServer(t, t.TempDir(), "old.git")
	root := git(t, old, "commit-tree", "4b825dc642cb6eb9a060e54bf8d69288fbee4904", "-m", "initialize readproof store")
	git(t, old, "update-ref", store.JournalRef, root)
	c := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, c, "old", old)
	mustPull(t, c, "old")
	c.run(t, "r1", "a")
	mustPush(t, c, "old")
}

// TestPushWarnsHead: a remote whose HEAD names another branch than main
// gets a warning.
func TestPushWarnsHead(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "r.git")
	git(t, "", "init", "--quiet", "--bare", "--initial-branch=trunk", dir)
	p := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, p, "origin", dir)
	res := mustPush(t, p, "origin")
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "HEAD names") {
		t.Fatalf("warnings %q, want one about HEAD", res.Warnings)
	}
	git(t, dir, "symbolic-ref", "HEAD", store.JournalRef)
	p.run(t, "r1", "a")
	if res := mustPush(t, p, "origin"); len(res.Warnings) != 0 {
		t.Fatalf("warnings %q with HEAD on main", res.Warnings)
	}
}
