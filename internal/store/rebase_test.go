package store

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestRebaseRebuildsTheSameObservations: a batch holds commit ids, not
// observations, and a rebase after a conflict reads each commit back and
// writes it again on the new tip. The rebased commits are exactly what
// buildObservation makes from the same observation and definition on that
// tip, and a later resolve in the batch sees the pending observation.
func TestRebaseRebuildsTheSameObservations(t *testing.T) {
	toml, files, uris := manyDocs(1, 100)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	b := newBatch()
	if _, err := f.s.resolve(ctx, uris[0], b); err != nil {
		t.Fatal(err)
	}
	f.clock.Add(1e9)
	f.write(t, "docs/d00000.md", "changed once")
	if _, err := f.s.resolve(ctx, uris[0], b); err != nil {
		t.Fatal(err)
	}
	ref := b.obs[0].Name
	commits := pendingChain(b, 0)
	if len(commits) != 2 {
		t.Fatalf("pending commits %d, want 2", len(commits))
	}
	// the second resolve saw the first as the current observation
	if c, err := f.s.git.Commit(commits[1]); err != nil || len(c.Parents) != 1 || c.Parents[0] != commits[0] {
		t.Fatalf("second pending commit %+v, %v: want the first as parent", c, err)
	}
	// another writer moves the chain meanwhile
	f.clock.Add(1e9)
	f.write(t, "docs/d00000.md", "changed by another writer")
	if _, err := f.s.Resolve(ctx, uris[0]); err != nil {
		t.Fatal(err)
	}
	other, err := f.s.ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	before := commits
	if err := f.s.publish(b, nil); err != nil {
		t.Fatal(err)
	}
	tip, err := f.s.ref(ref)
	if err != nil || tip != b.obs[0].New || tip == before[1] || b.obs[0].Old != other {
		t.Fatalf("tip %s, %v; want the rebased %s on %s", tip, err, b.obs[0].New, other)
	}
	parent := other
	for i, id := range pendingChain(b, 0) {
		c, err := f.s.git.Commit(id)
		if err != nil {
			t.Fatal(err)
		}
		old, _ := f.s.git.Commit(before[i])
		if c.Tree != old.Tree || c.Message != old.Message || len(c.Parents) != 1 || c.Parents[0] != parent {
			t.Fatalf("rebased commit %d: %+v, was %+v, want parent %s", i, c, old, parent)
		}
		o, err := f.s.observationAt(id)
		if err != nil {
			t.Fatal(err)
		}
		data, err := f.s.readFile(c, "resource.json")
		if err != nil {
			t.Fatal(err)
		}
		var def Definition
		if err := json.Unmarshal(data, &def); err != nil {
			t.Fatal(err)
		}
		want, err := f.s.buildObservation(*o, &def, parent)
		if err != nil || want != id {
			t.Fatalf("rebased commit %d is %s, buildObservation on the new tip gives %s (%v)", i, id, want, err)
		}
		parent = id
	}
}

// pendingChain is the commits pending on b.obs[i]'s chain, oldest first.
func pendingChain(b *batch, i int) []gitstore.OID {
	return append(append([]gitstore.OID(nil), b.earlier[i]...), b.obs[i].New)
}
