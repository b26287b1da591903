package share

import (
	"context"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// TestNearAncestorAgreesWithGit: a push's journal check answers as git
// merge-base --is-ancestor did: nearAncestor says true only for an ancestor
// (near ones, through merges, the tip itself), and what it does not find
// within its budget (a far ancestor, a commit of another history) goes to
// git, whose answer is then the push's. reachedFrom, a pull's question of
// every manifest it adopted, answers as git does too.
func TestNearAncestorAgreesWithGit(t *testing.T) {
	t.Parallel()
	needGit(t)
	g := gitstore.NewTestStore(t)
	tr, err := gitstore.NewTransport(g.Path(), gitstore.TransportOptions{})
	if err != nil {
		t.Skip(err)
	}
	sig := gitstore.Signature{Name: "a", Email: "a@example.invalid", When: time.Unix(1700000000, 0).UTC()}
	n := 0
	commit := func(parents ...gitstore.OID) gitstore.OID {
		t.Helper()
		n++
		id, err := g.PutCommit(gitstore.Commit{Tree: emptyTreeOf(t, g), Parents: parents, Author: sig, Committer: sig, Message: "c" + string(rune('a'+n%26)) + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	chain := []gitstore.OID{commit()}
	for i := 0; i < 150; i++ {
		chain = append(chain, commit(chain[len(chain)-1]))
	}
	side := commit(chain[10])
	merge := commit(chain[len(chain)-1], side)
	other := commit()
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	tip := merge
	p := &pusher{ctx: context.Background(), g: g, t: tr}
	for _, c := range []gitstore.OID{tip, chain[len(chain)-1], chain[len(chain)-5], side, chain[10], chain[0], chain[60], other} {
		near := nearAncestor(g, c, tip, nearAncestorBudget)
		want, err := tr.IsAncestor(context.Background(), c, tip)
		if err != nil {
			t.Fatal(err)
		}
		if near && !want {
			t.Fatalf("%s: nearAncestor true, git says not an ancestor", c)
		}
		got, err := p.forward(tip, c, true)
		if err != nil || got != want {
			t.Fatalf("%s: forward %v, %v; git %v", c, got, err, want)
		}
	}
	// chain[0] is near through the side branch; chain[60] only down the
	// long line, past the budget
	if !nearAncestor(g, chain[len(chain)-5], tip, nearAncestorBudget) || !nearAncestor(g, chain[0], tip, nearAncestorBudget) ||
		nearAncestor(g, chain[60], tip, nearAncestorBudget) {
		t.Fatal("budget: a near ancestor not found, or a far one found")
	}

	// A pull's check of the manifests it adopted: reachedFrom answers as
	// git does, for many ids at once (one walk of the whole history) and
	// for one whose answer the walk's budget does not reach (git answers)
	all := []gitstore.OID{tip, chain[len(chain)-1], chain[len(chain)-5], side, chain[10], chain[0], chain[60], other}
	for _, ids := range [][]gitstore.OID{all, {other}, {chain[60]}, {chain[0], other}, nil} {
		got, err := reachedFrom(context.Background(), g, tr, tip, ids)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range ids {
			want, err := tr.IsAncestor(context.Background(), c, tip)
			if err != nil {
				t.Fatal(err)
			}
			if got[c] != want {
				t.Fatalf("reachedFrom(%d ids): %s %v, git %v", len(ids), c, got[c], want)
			}
		}
	}
}

func emptyTreeOf(t *testing.T, g gitstore.Store) gitstore.OID {
	t.Helper()
	id, err := g.PutTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
