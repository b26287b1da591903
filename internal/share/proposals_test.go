package share

import (
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestProposalMerges pins what a pull accepts on a tag chain a git host
// merged into: a proposal merged onto its own base, with its tree; and what
// it refuses (issue 16): a proposal whose base moved, a merge of something
// that is not a proposal of this tag, a merge whose tree was edited, an
// octopus.
func TestProposalMerges(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"doc": "v1\n", "other": "o1\n"})
	u, other := uri(t, "doc"), uri(t, "other")
	p.run(t, "r1", "doc", "other")
	base := p.tag(t, "doc", "prod")
	p.tag(t, "other", "prod")
	p.write(t, "doc", "v2\n")
	p.run(t, "r2", "doc")
	prop, err := p.s.ProposeTag(u, "prod", "", "")
	if err != nil {
		t.Fatal(err)
	}
	if prop.Base != base.Commit || prop.Target != "readproof/tags/demo/doc/prod" ||
		!strings.HasPrefix(prop.Branch, "readproof/proposals/demo/doc/prod/") {
		t.Fatalf("proposal = %+v", prop)
	}
	g := p.s.Git()
	commit := func(id gitstore.OID) gitstore.Commit {
		c, err := g.Commit(id)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	pc := commit(gitstore.OID(prop.Commit))
	merge := func(tree gitstore.OID, parents ...gitstore.OID) gitstore.OID {
		sig := gitstore.Signature{Name: "host", Email: "host@example.com", When: pc.Committer.When}
		id, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: parents, Author: sig, Committer: sig, Message: "Merge pull request #1\n"})
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	check := func(ids ...gitstore.OID) []ProposalRefusal {
		var list []gitstore.RevListCommit
		for _, id := range ids {
			list = append(list, gitstore.RevListCommit{ID: id})
		}
		r, err := proposalMerges(g, u, "prod", list)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := check(merge(pc.Tree, gitstore.OID(base.Commit), gitstore.OID(prop.Commit))); len(r) != 0 {
		t.Errorf("a proposal merged onto its base was refused: %+v", r)
	}
	// the tag moved directly meanwhile
	moved, err := p.s.SetTag(u, "prod", "")
	if err != nil {
		t.Fatal(err)
	}
	otherTip, err := p.s.Tag(other, "prod")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		id   gitstore.OID
		want string
	}{
		"base moved":   {merge(pc.Tree, gitstore.OID(moved.Commit), gitstore.OID(prop.Commit)), "was based on the tag's move"},
		"not proposal": {merge(pc.Tree, gitstore.OID(base.Commit), gitstore.OID(otherTip.Commit)), "is not a proposed move of"},
		"edited tree":  {merge(commit(gitstore.OID(base.Commit)).Tree, gitstore.OID(base.Commit), gitstore.OID(prop.Commit)), "edited while merging"},
		"octopus":      {merge(pc.Tree, gitstore.OID(base.Commit), gitstore.OID(prop.Commit), gitstore.OID(moved.Commit)), "a merge of 3 branches"},
	} {
		r := check(tc.id)
		if len(r) != 1 || !strings.Contains(r[0].Reason, tc.want) {
			t.Errorf("%s: refusals %+v, want one saying %q", name, r, tc.want)
		}
	}
	// taken as it is (fast-forward): accepted; squashed onto the moved tag:
	// refused, since tag.json keeps the base it was proposed on
	if r := check(gitstore.OID(prop.Commit)); len(r) != 0 {
		t.Errorf("a fast-forward to the proposal was refused: %+v", r)
	}
	squash := merge(pc.Tree, gitstore.OID(moved.Commit))
	if r := check(squash); len(r) != 1 || !strings.Contains(r[0].Reason, "squashed or rebased after the tag moved") {
		t.Errorf("a proposal squashed onto a moved tag: refusals %+v", r)
	}
	if r := check(gitstore.OID(moved.Commit)); len(r) != 0 {
		t.Errorf("a direct move was refused: %+v", r)
	}
	// a stale merge taken deliberately by `conflicts resolve` travels with
	// the resolution
	stale := merge(pc.Tree, gitstore.OID(moved.Commit), gitstore.OID(prop.Commit))
	sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: pc.Committer.When}
	resolved, err := g.PutCommit(gitstore.Commit{Tree: pc.Tree, Parents: []gitstore.OID{gitstore.OID(moved.Commit), stale}, Author: sig, Committer: sig,
		Message: "tag x@prod -> y\n\nresolve conflict: take remote\n"})
	if err != nil {
		t.Fatal(err)
	}
	if r := check(resolved, stale); len(r) != 0 {
		t.Errorf("a stale merge settled by a resolution was refused: %+v", r)
	}
	// a conflict resolution readproof wrote is not a host's merge
	if store.IsProposalMerge(gitstore.Commit{Parents: []gitstore.OID{"a", "b"}, Message: "tag x -> y\n\nresolve conflict: take remote\n"}) {
		t.Error("a conflict resolution was taken for a proposal merge")
	}
}

// TestPromoteRecordsWhereItCameFrom: one move, action promote, from the
// source tag, and history derives the action of moves recorded before.
func TestPromoteRecordsWhereItCameFrom(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"doc": "v1\n"})
	u := uri(t, "doc")
	p.run(t, "r1", "doc")
	p.tag(t, "doc", "prod")
	p.write(t, "doc", "v2\n")
	p.run(t, "r2", "doc")
	staging := p.tag(t, "doc", "staging")
	st, err := p.s.PromoteTag(u, "staging", "prod")
	if err != nil {
		t.Fatal(err)
	}
	if st.Snapshot != staging.Snapshot || st.Action != store.ActionPromote || st.From != "staging" {
		t.Fatalf("promote = %+v", st)
	}
	h, err := p.s.TagHistory(u, "prod")
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != 2 || h[0].Action != store.ActionPromote || h[1].Action != store.ActionSet {
		t.Fatalf("history = %+v", h)
	}
	if _, err := p.s.PromoteTag(u, "staging", "prod"); err == nil || !strings.Contains(err.Error(), "already points at") {
		t.Fatalf("promoting onto the same snapshot: %v", err)
	}
	if _, err := p.s.PromoteTag(u, "nope", "prod"); err == nil {
		t.Fatal("promoting from an unknown tag succeeded")
	}
}
