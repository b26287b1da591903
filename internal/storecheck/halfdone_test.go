package storecheck_test

import (
	"context"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestHalfDoneIsAWarning: the states a killed `run abort`, `run reopen` or
// `run commit` leaves (two refs for one run; docs/store-format.md, "Aborted
// run") are warnings that name the state and what completes it, each run is
// counted once in its state, and after gc settles them verify is clean.
func TestHalfDoneIsAWarning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := healthy(t)
	g := p.s.Git()
	shipping := uriOf("policies/shipping.md")
	for _, id := range []string{"ra", "rr", "rc", "ro"} {
		if err := p.s.StartRun(id); err != nil {
			t.Fatal(err)
		}
		if _, err := p.s.Mount(ctx, id, shipping); err != nil {
			t.Fatal(err)
		}
	}
	on := func(parent gitstore.OID, msg string) gitstore.OID {
		c, err := g.Commit(parent)
		if err != nil {
			t.Fatal(err)
		}
		sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: p.clock.Now()}
		id, err := g.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{parent}, Author: sig, Committer: sig, Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	update := func(u gitstore.RefUpdate) {
		if err := g.Update(u); err != nil {
			t.Fatal(err)
		}
	}
	// ra: abort killed after it moved the open ref onto its abort commit
	tip, _ := g.Ref(store.OpenPrefix + "ra")
	update(gitstore.RefUpdate{Name: store.OpenPrefix + "ra", Old: tip, New: on(tip, "abort run ra\n\n1 entry mounted\n")})
	// rr: reopen killed after it created the open ref
	a, err := p.s.AbortRun("rr")
	if err != nil {
		t.Fatal(err)
	}
	update(gitstore.RefUpdate{Name: store.OpenPrefix + "rr", New: on(a.Commit, "reopen run rr\n")})
	// rc: commit killed after it created the run's ref
	tip, _ = g.Ref(store.OpenPrefix + "rc")
	if _, err := p.s.CommitRun("rc"); err != nil {
		t.Fatal(err)
	}
	update(gitstore.RefUpdate{Name: store.OpenPrefix + "rc", New: tip})
	// ro: an abort of an earlier version (one transaction) killed between
	// its renames: an aborted ref on the open tip
	tip, _ = g.Ref(store.OpenPrefix + "ro")
	ac := on(tip, "abort run ro\n\n1 entry mounted\n")
	update(gitstore.RefUpdate{Name: store.AbortedPrefix + "ro/" + string(ac), New: ac})

	rep := p.check(t, storecheck.Options{})
	if !rep.OK() || rep.Warnings() != 4 {
		t.Fatalf("want four half-done warnings and nothing broken, got:\n%s", problems(rep))
	}
	for _, w := range [][]string{
		{"run ra", "the run is aborted", "readproof run abort ra", store.OpenPrefix + "ra"},
		{"run rr", "the run is open", "readproof gc", a.Ref},
		{"run rc", "the run is committed", "readproof gc", store.OpenPrefix + "rc"},
		{"run ro", "the run is open, with every entry", "readproof gc", store.AbortedPrefix + "ro/" + string(ac)},
	} {
		got := find(rep, storecheck.Warning, w[:3]...)
		if len(got) != 1 || got[0].Check != "half-done" || got[0].Ref != w[3] {
			t.Errorf("want a half-done warning with %q naming the stale ref %s, got:\n%+v", w[:3], w[3], got)
		}
	}
	// open-1, rr and ro are open; ra is aborted (the aborted refs of rr
	// and ro are stale); rc is committed, beside run-a, run-b and run-c
	if c := rep.Counts; c.OpenRuns != 3 || c.AbortedRuns != 1 || c.Runs != 4 {
		t.Errorf("counts: %d open, %d aborted, %d runs; want 3, 1, 4", c.OpenRuns, c.AbortedRuns, c.Runs)
	}
	if n, err := p.s.SettleRuns(ctx); err != nil || n != 4 {
		t.Fatalf("settle: %d %v, want 4", n, err)
	}
	rep = p.check(t, storecheck.Options{})
	if !rep.OK() || rep.Warnings() != 0 {
		t.Fatalf("after gc's settle, got:\n%s", problems(rep))
	}
	if c := rep.Counts; c.OpenRuns != 3 || c.AbortedRuns != 1 || c.Runs != 4 {
		t.Errorf("counts after settle: %d open, %d aborted, %d runs; want 3, 1, 4", c.OpenRuns, c.AbortedRuns, c.Runs)
	}
}
