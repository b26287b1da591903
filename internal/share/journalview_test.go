package share

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestPullRefusesForgedJournalView: the journal's tree is derived data, so
// a pull checks it: a remote whose main carries a view that is not the one
// its runs give (a document's bytes swapped) is refused before any local
// ref moves, and the diverged case ends with one tree on both sides.
func TestPullRefusesForgedJournalView(t *testing.T) {
	t.Parallel()
	u := bareServer(t, t.TempDir(), "shared.git")
	a := newProject(t, map[string]string{"policy": "refunds within 30 days\n", "faq": "faq v1\n"})
	b := newProject(t, map[string]string{"policy": "refunds within 10 days\n"})
	a.run(t, "a-1", "policy", "faq")
	a.write(t, "policy", "refunds within 14 days\n")
	a.run(t, "a-2", "policy", "faq")
	b.run(t, "b-1", "policy")
	addRemote(t, a, "origin", u)
	addRemote(t, b, "origin", u)
	mustPush(t, a, "origin")

	// Diverged: b merges, pushes; a fast-forwards. One tree on both sides:
	// the view of all three runs.
	mustPull(t, b, "origin")
	mustPush(t, b, "origin")
	mustPull(t, a, "origin")
	ta := git(t, a.path(), "rev-parse", "main^{tree}")
	if tb := git(t, b.path(), "rev-parse", "main^{tree}"); ta != tb {
		t.Fatalf("main trees differ after the exchange: %s and %s", ta, tb)
	}
	want, err := store.FullJournalTree(a.s.Objects(), gitstore.OID(git(t, a.path(), "rev-parse", "main")))
	if err != nil || string(want) != ta {
		t.Fatalf("main's tree %s, the view of its runs %s (%v)", ta, want, err)
	}

	// a forges a view: faq shows the policy's bytes.
	g := a.s.Git()
	tip := gitstore.OID(git(t, a.path(), "rev-parse", "main"))
	c, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	policy, err := gitstore.FileAt(g, c.Tree, "documents/demo/policy")
	if err != nil {
		t.Fatal(err)
	}
	ed := gitstore.NewTreeEditor(g, c.Tree)
	if err := ed.Set(policy, "documents", "demo", "faq"); err != nil {
		t.Fatal(err)
	}
	forged, err := ed.Write()
	if err != nil {
		t.Fatal(err)
	}
	fc, err := g.PutCommit(gitstore.Commit{Tree: forged, Parents: []gitstore.OID{tip}, Author: c.Author, Committer: c.Committer, Message: "rebuild journal view\n\nformat 2\nruns 3\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.JournalRef, Old: tip, New: fc}); err != nil {
		t.Fatal(err)
	}
	git(t, a.path(), "push", "--quiet", u, "main:main")

	before := refsExcept(t, b.path(), "refs/readproof-remotes/")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), "is not the document view of the runs it records") {
		t.Fatalf("pull of a forged view: %v, want ErrUnverified naming the view", err)
	}
	if after := refsExcept(t, b.path(), "refs/readproof-remotes/"); after != before {
		t.Fatalf("a refused pull moved refs:\n%s\n%s", before, after)
	}
	if got := git(t, b.path(), "rev-parse", "main"); got != string(tip) {
		t.Fatalf("b's main moved to %s after a refused pull", got)
	}
}
