package share

import (
	"bytes"
	"context"
	"path/filepath"
	"runtime"
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
// refs a second time) for the verdict MAC check. It lists its tracking refs
// once, for fetchListed's transaction, and the plan takes them from what
// that wrote: before session 20 the plan listed the tracking run refs
// again.
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
	tracking, trackingRuns := RemotesPrefix+"origin/", RemotesPrefix+"origin/runs/"
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
		if g.n[store.RunsPrefix] != c.localRuns || g.n[tracking] != c.tracking || g.n[trackingRuns] != 0 {
			t.Errorf("%s listed %s %d times, %s %d times and %s %d times, want %d, %d and 0 (listings: %v)",
				c.what, store.RunsPrefix, g.n[store.RunsPrefix], tracking, g.n[tracking], trackingRuns, g.n[trackingRuns],
				c.localRuns, c.tracking, g.n)
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

// TestPullAllocationsPerRun (issue 14, a pull at 10^5 runs): a pull of a
// few new runs makes, per run of the store, the strings of the listing
// (with, from a path, the object check of each listed ref, as git makes
// it), of the local run refs and of the tracking refs, and nothing more:
// no map of every run (a map makes few but large allocations: the bytes a
// run are bounded too), no second listing of the tracking refs, no
// tracking ref name for a ref that does not move. Before session 20 the
// plan listed the tracking run refs again, fetchListed made every tracking
// name, and both sides' runs, the final runs and the manifests they name
// were maps: 6 allocations and 2,000 bytes a run (now 4 and 800). The
// figures are slopes between two store sizes, so what every pull costs
// (git processes, the checks of the new runs) cancels out.
func TestPullAllocationsPerRun(t *testing.T) {
	needGit(t)
	sizes := [2]int{600, 1600} // both past revListBudget: the journal walk costs the same
	var mallocs, bytes [2]uint64
	for i, n := range sizes {
		dir := bareServer(t, t.TempDir(), "s.git")
		importRuns(t, dir, 0, n)
		dst := filepath.Join(t.TempDir(), "clone")
		if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
			t.Fatal(err)
		}
		importRuns(t, dir, n, 5)
		git(t, dir, "pack-refs", "--all") // as a remote of 10^5 runs holds them: the listing one string a ref
		s, err := store.Open(dst, nil, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		res, err := pullWith(context.Background(), s, s.Git(), "origin", Options{})
		runtime.ReadMemStats(&after)
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NewRuns) != 5 {
			t.Fatalf("pulled %d runs, want 5", len(res.NewRuns))
		}
		mallocs[i], bytes[i] = after.Mallocs-before.Mallocs, after.TotalAlloc-before.TotalAlloc
	}
	runs := float64(sizes[1] - sizes[0])
	perRun, bytesPerRun := float64(mallocs[1]-mallocs[0])/runs, float64(bytes[1]-bytes[0])/runs
	t.Logf("a pull of 5 runs into %d / %d runs: %d / %d allocations, %d / %d bytes: %.2f allocations and %.0f bytes a run",
		sizes[0], sizes[1], mallocs[0], mallocs[1], bytes[0], bytes[1], perRun, bytesPerRun)
	if perRun > 4.5 || bytesPerRun > 1200 {
		t.Fatalf("a pull of 5 new runs made %.2f allocations and %.0f bytes per run of the store, want at most 4.5 and 1200 (the listing's, the local and the tracking refs' strings)", perRun, bytesPerRun)
	}
}
