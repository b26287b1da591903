package share

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
)

// recordReads counts the reads of the verdict records of blobs (their
// verdicts.json blobs; a manifest is read under the same bound), from any
// goroutine: a clone checks its journal while it checks its manifests.
type recordReads struct {
	gitstore.Store
	blobs map[gitstore.OID]bool
	n     atomic.Int64
}

func (c *recordReads) BlobAtMost(id gitstore.OID, most int64) ([]byte, error) {
	if c.blobs[id] {
		c.n.Add(1)
	}
	return c.Store.BlobAtMost(id, most)
}

// TestPullReadsVerdictsOnce (session 31): a pull reads each verdict record
// it brings once, with the probe key or without it: the record check
// (pullVerdictMACs) decodes each, and the plan's chain check and journal
// check take what it decoded. Before, a keyless pull read each record
// three times (the record check, the chain check, the journal check of
// `record check` commits), and a clone twice (the journal check, then the
// chains); a clone now checks the journal's records after the chains, and
// reads none of them again.
func TestPullReadsVerdictsOnce(t *testing.T) {
	t.Parallel()
	keys, err := probe.NewRandomKeys()
	if err != nil {
		t.Fatal(err)
	}
	srv, a, _ := twoProjects(t)
	for _, run := range []string{"r1", "r2"} {
		boundRun(t, a, keys, run, "policy")
		for range 3 {
			checkAs(t, a, keys, run, func(*store.VerdictEntry) {})
		}
	}
	mustPush(t, a, "origin")
	blobs := map[gitstore.OID]bool{}
	for _, run := range []string{"r1", "r2"} {
		for _, c := range strings.Fields(git(t, a.path(), "rev-list", store.VerdictsPrefix+run)) {
			blobs[gitstore.OID(strings.TrimSpace(git(t, a.path(), "rev-parse", c+":"+store.VerdictsFile)))] = true
		}
	}
	const records = 6
	if len(blobs) != records {
		t.Fatalf("the chains hold %d records, want %d", len(blobs), records)
	}
	for _, k := range []*probe.Keys{nil, &keys} {
		p := newProject(t, map[string]string{"runbook": "r\n"})
		addRemote(t, p, "origin", srv)
		g := &recordReads{Store: p.s.Git(), blobs: blobs}
		res, err := pullWith(context.Background(), p.s, g, "origin", Options{ProbeKeys: k})
		if err != nil || len(res.Verdicts) != 2 {
			t.Fatalf("pull (key %v): %+v, %v; want both verdict chains adopted", k != nil, res, err)
		}
		if n := g.n.Load(); n != records {
			t.Errorf("pull (key %v) read %d verdict records, want each of the %d once", k != nil, n, records)
		}
		// a clone's checks of the same store: the journal's, then the
		// chains' (as precheckClone and verifyClone make them)
		local, err := readState(p.s.Git(), localPrefixes())
		if err != nil {
			t.Fatal(err)
		}
		manifests, _ := cloneManifests(local, newPullResult("origin", false))
		c := &recordReads{Store: p.s.Git(), blobs: blobs}
		pre := checkCloneObjects(c, local, manifests, Options{})
		if res, err := verifyClone(context.Background(), c, nil, Options{ProbeKeys: k}, pre); err != nil || len(res.Verdicts) != 2 {
			t.Fatalf("verifyClone (key %v): %+v, %v", k != nil, res, err)
		}
		if n := c.n.Load(); n != records {
			t.Errorf("a clone's checks (key %v) read %d verdict records, want each of the %d once", k != nil, n, records)
		}
	}
}
