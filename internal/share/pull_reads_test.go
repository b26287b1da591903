package share

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
)

// refListings counts the listings (Refs) of each prefix.
type refListings struct {
	gitstore.Store
	n map[string]int
}

func (c *refListings) Refs(prefix string) ([]gitstore.Ref, error) {
	c.n[prefix]++
	return c.Store.Refs(prefix)
}

// TestPullListsRunRefsOnce: a pull reads the local run refs (10^5 at
// 10^5 runs) once, with the probe key too: before session 19 it read them
// in upToDate, again in the plan, and a third time (with the tracking run
// refs a second time) for the verdict MAC check.
func TestPullListsRunRefsOnce(t *testing.T) {
	t.Parallel()
	needGit(t)
	dir := bareServer(t, t.TempDir(), "s.git")
	importRuns(t, dir, 0, 20)
	dst := filepath.Join(t.TempDir(), "clone")
	if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	importRuns(t, dir, 20, 5)
	s, err := store.Open(dst, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys, err := probe.DeriveKeys(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tracking := RemotesPrefix + "origin/runs/"
	for _, c := range []struct {
		what                string
		newRuns             int
		localRuns, tracking int
	}{{"a pull of 5 new runs", 5, 1, 1}, {"a pull with nothing new", 0, 1, 0}} {
		g := &refListings{Store: s.Git(), n: map[string]int{}}
		res, err := pullWith(context.Background(), s, g, "origin", Options{ProbeKeys: &keys})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NewRuns) != c.newRuns {
			t.Fatalf("%s: pulled %d runs", c.what, len(res.NewRuns))
		}
		if g.n[store.RunsPrefix] != c.localRuns || g.n[tracking] != c.tracking {
			t.Errorf("%s listed %s %d times and %s %d times, want %d and %d (listings: %v)",
				c.what, store.RunsPrefix, g.n[store.RunsPrefix], tracking, g.n[tracking], c.localRuns, c.tracking, g.n)
		}
	}
}

// writeDuring runs write once, on the pull's listing of its tracking refs:
// after upToDate read the local refs, before the fetch and the plan.
type writeDuring struct {
	gitstore.Store
	prefix  string
	write   func()
	updates int
}

func (w *writeDuring) Update(ups ...gitstore.RefUpdate) error {
	w.updates++
	return w.Store.Update(ups...)
}

func (w *writeDuring) Refs(prefix string) ([]gitstore.Ref, error) {
	if prefix == w.prefix && w.write != nil {
		w.write()
		w.write = nil
	}
	return w.Store.Refs(prefix)
}

// TestPullLocalWriteAfterUpToDate: the first plan uses the local refs
// upToDate read; a run recorded here meanwhile moves main under it, the
// transaction (which compares main with the value planned from) fails, and
// the plan made again reads the local refs anew: the pull merges the
// journals and the local run stays.
func TestPullLocalWriteAfterUpToDate(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "s.git")
	a := newProject(t, map[string]string{"policy": "refunds within 30 days\n"})
	b := newProject(t, map[string]string{"runbook": "drain, then deploy\n"})
	a.run(t, "a-1", "policy")
	addRemote(t, a, "origin", dir)
	addRemote(t, b, "origin", dir)
	mustPush(t, a, "origin")
	g := &writeDuring{Store: b.s.Git(), prefix: RemotesPrefix + "origin/", write: func() { b.run(t, "b-1", "runbook") }}
	res, err := pullWith(context.Background(), b.s, g, "origin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.write != nil {
		t.Fatal("the local run was not recorded during the pull")
	}
	if g.updates != 3 {
		t.Fatalf("%d ref transactions, want 3 (the tracking refs, the plan on the refs read before the run, refused, and the plan made again)", g.updates)
	}
	if len(res.NewRuns) != 1 || res.NewRuns[0].RunID != "a-1" || res.Journal != "merged" {
		t.Fatalf("pull: new runs %v, journal %s; want a-1, merged", res.NewRuns, res.Journal)
	}
	for _, id := range []string{"a-1", "b-1"} {
		if _, err := b.s.Git().Ref(store.RunsPrefix + id); err != nil {
			t.Fatalf("run %s after the pull: %v", id, err)
		}
	}
	if out := git(t, b.path(), "rev-list", "main"); !strings.Contains(out, git(t, b.path(), "rev-parse", store.RunsPrefix+"b-1")) {
		t.Fatalf("main does not reach run b-1 recorded during the pull")
	}
	gitstore.Fsck(t, b.path())
}

// TestPullLocalTagMoveAfterUpToDate: a tag moved here after upToDate read
// the local refs (no run recorded meanwhile), while the remote moved the
// same tag: the plan on the refs read before would fast-forward the tag
// from its old value; the transaction refuses it, and the plan made again
// keeps the remote value as a conflict, the local one in force.
func TestPullLocalTagMoveAfterUpToDate(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "s.git")
	a := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, a, "origin", dir)
	a.run(t, "base", "doc")
	a.tag(t, "doc", "prod")
	mustPush(t, a, "origin")
	b := newProject(t, map[string]string{"doc": "v1\n"})
	addRemote(t, b, "origin", dir)
	mustPull(t, b, "origin")

	a.write(t, "doc", "v2 from a\n")
	a.run(t, "a-2", "doc")
	ta := a.tag(t, "doc", "prod")
	mustPush(t, a, "origin")
	b.write(t, "doc", "v2 from b\n")
	b.run(t, "b-2", "doc") // before the pull: only the tag moves during it
	var tb *store.TagState
	g := &writeDuring{Store: b.s.Git(), prefix: RemotesPrefix + "origin/", write: func() { tb = b.tag(t, "doc", "prod") }}
	res, err := pullWith(context.Background(), b.s, g, "origin", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if g.write != nil {
		t.Fatal("the tag was not moved during the pull")
	}
	if g.updates != 3 {
		t.Fatalf("%d ref transactions, want 3 (the tracking refs, the plan on the refs read before the tag moved, refused, and the plan made again)", g.updates)
	}
	if len(res.TagConflicts) != 1 || res.TagConflicts[0].Local.Snapshot != tb.Snapshot || res.TagConflicts[0].Remote.Snapshot != ta.Snapshot {
		t.Fatalf("pull: tag conflicts %+v, want prod kept here at %s, %s of the remote kept as a conflict", res.TagConflicts, tb.Snapshot, ta.Snapshot)
	}
	if st, err := b.s.Tag(uri(t, "doc"), "prod"); err != nil || st.Snapshot != tb.Snapshot {
		t.Fatalf("prod after the pull: %+v %v, want %s, moved here during the pull", st, err, tb.Snapshot)
	}
	gitstore.Fsck(t, b.path())
}
