package storecheck_test

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/share"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestRenamedRunIsNotBroken: a run renamed by `conflicts rename` (the
// journal records the rename for that manifest) checks clean, a rename of
// the rename too; a ref naming another run's manifest without a recorded
// rename is still broken.
func TestRenamedRunIsNotBroken(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	if _, err := share.RenameRun(p.s, "run-a", "run-z", "", p.clock.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := share.RenameRun(p.s, "run-z", "run-y", "", p.clock.Now()); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{ReadData: true})
	if !rep.OK() || len(find(rep, storecheck.Broken)) != 0 {
		t.Fatalf("renamed run reported:\n%s", problems(rep))
	}
	// The manifest of run-b under another name, with no rename recorded
	// for it (the journal's renames are about run-a's manifest).
	g := p.s.Git()
	mb, err := g.Ref(store.RunsPrefix + "run-b")
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.RunsPrefix + "run-z", New: mb}); err != nil {
		t.Fatal(err)
	}
	rep = p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, "run run-z", `manifest.json records run "run-b"`); len(got) != 1 {
		t.Fatalf("want the unrecorded rename named, got:\n%s", problems(rep))
	}
	if got := find(rep, storecheck.Broken, "run run-y"); len(got) != 0 {
		t.Fatalf("recorded rename reported:\n%s", problems(rep))
	}
}

// TestResourceMergeIsNotAnObservation: a merge commit on a resource chain
// (written by a pull when both sides observed) is neither counted nor
// decoded as an observation.
func TestResourceMergeIsNotAnObservation(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	before := p.check(t, storecheck.Options{}).Counts.Observations
	chains, _, err := p.s.ResourceChains()
	if err != nil || len(chains) == 0 {
		t.Fatalf("resource chains: %v, %v", chains, err)
	}
	ch := chains[0]
	g := p.s.Git()
	tip, err := g.Commit(ch.Tip)
	if err != nil || len(tip.Parents) == 0 {
		t.Fatalf("tip %s: %+v, %v", ch.Tip, tip, err)
	}
	// A sibling of the tip with the same observation, then a merge of both
	// whose tree holds no observation.json at all.
	sibling, err := g.PutCommit(gitstore.Commit{Tree: tip.Tree, Parents: tip.Parents, Author: sig(), Committer: sig(), Message: "observe again\n"})
	if err != nil {
		t.Fatal(err)
	}
	empty, _ := g.PutTree(nil)
	merge, err := g.PutCommit(gitstore.Commit{Tree: empty, Parents: []gitstore.OID{ch.Tip, sibling}, Author: sig(), Committer: sig(), Message: "merge observations\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ch.Ref, Old: ch.Tip, New: merge}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	for _, pr := range find(rep, storecheck.Broken) {
		if strings.Contains(pr.Object, string(merge)) {
			t.Fatalf("merge commit checked as an observation:\n%s", problems(rep))
		}
	}
	if got := rep.Counts.Observations; got != before+1 {
		t.Fatalf("%d observations, want %d (the sibling counts, the merge does not)", got, before+1)
	}
}
