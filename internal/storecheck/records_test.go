package storecheck_test

import (
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestDeletedRunRef (issue 13.1): a run ref deleted while the journal still
// records the run is broken.
func TestDeletedRunRef(t *testing.T) {
	p := newProject(t, twoDocs, "")
	p.run(t, "run-a", uriOf("policies/refunds.md"))
	m := p.run(t, "run-b", uriOf("policies/shipping.md"))
	if rep := p.check(t, storecheck.Options{}); !rep.OK() {
		t.Fatalf("healthy store:\n%s", problems(rep))
	}
	if err := p.s.Git().Update(gitstore.RefUpdate{Name: store.RunsPrefix + "run-b", Old: gitstore.OID(m)}); err != nil {
		t.Fatal(err)
	}
	rep := p.check(t, storecheck.Options{})
	if got := find(rep, storecheck.Broken, "run run-b", "journal records run run-b", m, "missing"); len(got) != 1 {
		t.Fatalf("want the deleted run ref named, got:\n%s", problems(rep))
	}
}
