package share

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
	"github.com/readproof/readproof/probe"
)

// TestRenameVouchesOnlyForItsOwnChain (session 31, renamechain): a record
// in run x's verdict chain may name a manifest the journal records renamed
// away from x (a settled conflict), but a rename away from another id
// vouches for nothing in x's chain. A record of chain r1 naming the
// manifest renamed from r2 to r3 stays broken for verify and refused by a
// pull and a guarded remote, with its MAC intact.
func TestRenameVouchesOnlyForItsOwnChain(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, a, b := twoProjects(t)
	boundRun(t, a, keys, "r1", "policy")
	m2 := boundRun(t, a, keys, "r2", "policy")
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	if _, err := RenameRun(a.s, "r2", "r3", "", a.clock()); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	good := strings.TrimSpace(git(t, a.path(), "rev-parse", store.VerdictsPrefix+"r1"))
	planted := plantRecord(t, a, keys, "r1", 2, m2)
	want := fmt.Sprintf("names manifest %s", m2.ID)
	for _, k := range []*probe.Keys{nil, &keys} {
		rep, err := storecheck.Check(context.Background(), a.s, storecheck.Options{ProbeKeys: k})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), "record names manifest "+m2.ID) {
			t.Errorf("verify (key %v) of record %s in chain r1 naming %s (renamed from r2): %+v; want it broken", k != nil, planted, m2.ID, rep.Problems)
		}
	}
	mustPush(t, a, "origin") // the bare server has no hook
	before := allRefs(t, b.path())
	_, err := Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys})
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("verdict record %s of run r1 (check 2) %s", planted, want)) {
		t.Fatalf("pull of record %s: %v; want it refused as naming %s", planted, err, m2.ID)
	}
	if after := allRefs(t, b.path()); after != before {
		t.Fatalf("a refused pull moved refs:\n%s\nwant\n%s", after, before)
	}
	// a guarded remote seeded with the good chain refuses the planted record
	u := guardedRemote(t, t.TempDir(), "guarded.git")
	addRemote(t, a, "guarded", u)
	git(t, a.path(), "update-ref", store.VerdictsPrefix+"r1", good)
	mustPush(t, a, "guarded")
	git(t, a.path(), "update-ref", store.VerdictsPrefix+"r1", string(planted))
	out := pushRefused(t, a.path(), u, store.VerdictsPrefix+"r1")
	if !strings.Contains(out, fmt.Sprintf("verdict record %s of run r1 (check 2) %s", planted, want)) {
		t.Fatalf("the hook's refusal:\n%s\nwant it to name record %s and manifest %s", out, planted, m2.ID)
	}
}

// TestPlantedRenameVouchesForNothing (session 31, revlast): a journal
// record "rename run r1 to r9" naming a manifest that records run r2 (one
// a teammate's remote can plant: a pull adopts the remote's journal) does
// not make a record of chain r1 naming that manifest stand. A check goes
// only to the chain of the id its manifest records, so no such record is
// one `probe check` wrote. verify reports it broken with the key too (its
// MAC holds: the key is the team's), and a pull and a guarded remote
// refuse it.
func TestPlantedRenameVouchesForNothing(t *testing.T) {
	t.Parallel()
	keys := randomKeys(t)
	_, a, b := twoProjects(t)
	boundRun(t, a, keys, "r1", "policy")
	m2 := boundRun(t, a, keys, "r2", "policy")
	checkAs(t, a, keys, "r1", func(*store.VerdictEntry) {})
	mustPush(t, a, "origin")
	g := a.s.Git()
	goodMain, err := g.Ref(store.JournalRef)
	if err != nil {
		t.Fatal(err)
	}
	good := strings.TrimSpace(git(t, a.path(), "rev-parse", store.VerdictsPrefix+"r1"))
	tree, err := store.JournalTree(g, []gitstore.OID{goodMain}, "")
	if err != nil {
		t.Fatal(err)
	}
	sig := signature(a.clock())
	j, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{goodMain}, Author: sig, Committer: sig, Message: store.JournalRenameMessage("r1", "r9", gitstore.OID(m2.ID))})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.JournalRef, Old: goodMain, New: j}); err != nil {
		t.Fatal(err)
	}
	planted := plantRecord(t, a, keys, "r1", 2, m2)
	want := fmt.Sprintf("verdict record %s of run r1 (check 2) names manifest %s", planted, m2.ID)
	for _, k := range []*probe.Keys{nil, &keys} {
		rep, err := storecheck.Check(context.Background(), a.s, storecheck.Options{ProbeKeys: k})
		if err != nil {
			t.Fatal(err)
		}
		if rep.OK() || !strings.Contains(fmt.Sprint(rep.Problems), "record names manifest "+m2.ID) {
			t.Errorf("verify (key %v) of record %s in chain r1 naming %s (recorded as r2, a planted rename away from r1): %+v; want it broken", k != nil, planted, m2.ID, rep.Problems)
		}
	}
	git(t, a.path(), "push", "-q", "origin", store.JournalRef, store.VerdictsPrefix+"r1")
	before := allRefs(t, b.path())
	_, err = Pull(context.Background(), b.s, "origin", Options{ProbeKeys: &keys})
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("pull of record %s with a planted rename: %v; want it refused as naming %s", planted, err, m2.ID)
	}
	if after := allRefs(t, b.path()); after != before {
		t.Fatalf("a refused pull moved refs:\n%s\nwant\n%s", after, before)
	}
	// a guarded remote seeded with the good chain refuses the planted
	// record pushed with the planted journal record
	u := guardedRemote(t, t.TempDir(), "guarded.git")
	addRemote(t, a, "guarded", u)
	git(t, a.path(), "update-ref", store.VerdictsPrefix+"r1", good)
	git(t, a.path(), "update-ref", store.JournalRef, string(goodMain))
	mustPush(t, a, "guarded")
	git(t, a.path(), "update-ref", store.VerdictsPrefix+"r1", string(planted))
	git(t, a.path(), "update-ref", store.JournalRef, string(j))
	out := pushRefused(t, a.path(), u, store.JournalRef, store.VerdictsPrefix+"r1")
	if !strings.Contains(out, want) {
		t.Fatalf("the hook's refusal:\n%s\nwant it to name record %s and manifest %s", out, planted, m2.ID)
	}
}
