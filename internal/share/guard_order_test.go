package share

import (
	"fmt"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/manifest"
)

// TestParentsFirst: a pull checks the views of new journal commits parents
// first (so the document index it keeps in memory moves forward from one
// to the next, docs/store-format.md "Journal view"): every commit comes
// after each of its parents among the walked ones, once, whatever the
// shape (merges, a parent shared by both sides, parents not walked).
func TestParentsFirst(t *testing.T) {
	// tip = merge(l2, r2); l2 -> l1 -> base; r2 -> r1 -> base; r1 -> l1 too;
	// base's parent "old" was not walked (known locally).
	walked := map[gitstore.OID][]gitstore.OID{
		"tip":  {"l2", "r2"},
		"l2":   {"l1"},
		"l1":   {"base"},
		"r2":   {"r1"},
		"r1":   {"base", "l1"},
		"base": {"old"},
		"lost": {"base"}, // walked, not reachable from tip
	}
	order := parentsFirst("tip", walked)
	at := map[gitstore.OID]int{}
	for i, id := range order {
		if _, dup := at[id]; dup {
			t.Fatalf("%s twice in %v", id, order)
		}
		at[id] = i
	}
	if len(order) != 6 {
		t.Fatalf("order %v, want the 6 commits reachable from tip", order)
	}
	for id, ps := range walked {
		if id == "lost" {
			continue
		}
		for _, p := range ps {
			if i, ok := at[p]; ok && i > at[id] {
				t.Fatalf("%s comes after its child %s in %v", p, id, order)
			}
		}
	}
	// A long chain: no recursion depth to run out of.
	chain := map[gitstore.OID][]gitstore.OID{}
	for i := 1; i < 100000; i++ {
		chain[gitstore.OID(fmt.Sprint(i))] = []gitstore.OID{gitstore.OID(fmt.Sprint(i - 1))}
	}
	if got := parentsFirst("99999", chain); len(got) != 99999 || got[0] != "1" || got[len(got)-1] != "99999" {
		t.Fatalf("chain: %d commits, first %s", len(got), got[0])
	}
	if got := parentsFirst("unknown", walked); len(got) != 0 {
		t.Fatalf("a tip not walked: %v", got)
	}
}

// countingGit counts the manifests the view check reads (BlobAtMost under
// a manifest's bound; a view's run.json is read under a record's).
type countingGit struct {
	gitstore.Store
	manifests int
}

func (c *countingGit) BlobAtMost(id gitstore.OID, most int64) ([]byte, error) {
	if most == manifest.MaxBytes {
		c.manifests++
	}
	return c.Store.BlobAtMost(id, most)
}

// TestPullCheckBehindFutureRun: a pull or clone checks every new journal
// commit's view; behind a run stamped 14 hours ahead, every later run
// sorts before it. Checking 80 such commits instead of 40 reads a few
// manifests per commit more, not every run since the future one again for
// each (as it did before session 19).
func TestPullCheckBehindFutureRun(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"policy": "refunds within 30 days\n"})
	p.run(t, "base", "policy")
	now := p.now
	p.now = now.Add(14 * time.Hour)
	p.run(t, "ahead", "policy")
	p.now = now
	tips := map[int]gitstore.OID{}
	for k := 1; k <= 80; k++ {
		p.write(t, "policy", fmt.Sprintf("refunds within %d days\n", k))
		p.run(t, fmt.Sprintf("local-%02d", k), "policy")
		tips[k] = gitstore.OID(git(t, p.path(), "rev-parse", "main"))
	}
	read := map[int]int{}
	for _, k := range []int{40, 80} {
		g := &countingGit{Store: p.s.Git()}
		failures, records := checkJournalWhere(g, tips[k], func(gitstore.OID) bool { return true }, map[gitstore.OID]bool{}, verifiedSet{}, nil, nil)
		if len(failures) > 0 || len(records) != k+2 {
			t.Fatalf("check of %d runs: %v, %d records", k, failures, len(records))
		}
		read[k] = g.manifests
	}
	if more := read[80] - read[40]; more > 4*40 {
		t.Fatalf("checking 80 runs behind a future one read %d manifests, 40 runs %d: %d more, want at most %d", read[80], read[40], more, 4*40)
	}
}
