package share

import (
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestPullSaysJournalUnrelated: a pull that merges a remote journal sharing
// no commit with the local one but a root says so (journal_unrelated),
// whether the two roots `readproof init` wrote are one commit (made in the
// same second) or two; a store whose journal is its root alone (a new
// teammate's `readproof init`, merged when its root is not the remote's),
// and a pull from a remote whose journal the store holds part of, do not.
func TestPullSaysJournalUnrelated(t *testing.T) {
	t.Parallel()
	// reroot gives p's journal a root made ago before its own, as a store
	// made at another time has, and records runs on it.
	reroot := func(p *project, ago time.Duration, runs ...string) {
		t.Helper()
		g := p.s.Git()
		old, err := g.Ref(store.JournalRef)
		if err != nil {
			t.Fatal(err)
		}
		c, err := g.Commit(old)
		if err != nil {
			t.Fatal(err)
		}
		if len(c.Parents) != 0 {
			t.Fatalf("%s: main is not the root", p.dir)
		}
		sig := gitstore.Signature{Name: c.Author.Name, Email: c.Author.Email, When: c.Author.When.Add(-ago)}
		root, err := g.PutCommit(gitstore.Commit{Tree: c.Tree, Author: sig, Committer: sig, Message: c.Message})
		if err != nil {
			t.Fatal(err)
		}
		if root == old {
			t.Fatalf("%s: the new root is the old one", p.dir)
		}
		if err := g.Update(gitstore.RefUpdate{Name: store.JournalRef, Old: old, New: root}); err != nil {
			t.Fatal(err)
		}
		for _, id := range runs {
			p.run(t, id, "doc")
		}
	}
	for _, sameRoot := range []bool{true, false} {
		shared := bareServer(t, t.TempDir(), "shared.git")
		alice := newProject(t, map[string]string{"doc": "alice\n"})
		zed := newProject(t, map[string]string{"doc": "zed\n"})
		carol := newProject(t, map[string]string{"doc": "carol\n"})
		if sameRoot {
			// one root for all: what stores made in the same second have
			root, err := alice.s.Git().Ref(store.JournalRef)
			if err != nil {
				t.Fatal(err)
			}
			for _, p := range []*project{zed, carol} {
				g := p.s.Git()
				old, _ := g.Ref(store.JournalRef)
				if old == root {
					continue
				}
				git(t, alice.path(), "push", "--quiet", p.path(), string(root)+":refs/heads/tmp-root")
				if err := g.Update(gitstore.RefUpdate{Name: store.JournalRef, Old: old, New: root}, gitstore.RefUpdate{Name: "refs/heads/tmp-root", Old: root}); err != nil {
					t.Fatal(err)
				}
			}
			alice.run(t, "a-1", "doc")
			zed.run(t, "z-1", "doc")
		} else {
			alice.run(t, "a-1", "doc")
			reroot(zed, time.Hour, "z-1")
			reroot(carol, 2*time.Hour) // not zed's new root, which the remote holds once zed pushed
		}
		addRemote(t, alice, "origin", shared)
		mustPush(t, alice, "origin")
		for _, c := range []struct {
			p    *project
			want bool
		}{{zed, true}, {carol, false}, {alice, false}} {
			if c.p != alice {
				addRemote(t, c.p, "origin", shared)
			}
			res := mustPull(t, c.p, "origin")
			if res.JournalUnrelated != c.want {
				t.Fatalf("same root %v: pull into %s: journal %s, journal_unrelated %v, want %v", sameRoot, c.p.dir, res.Journal, res.JournalUnrelated, c.want)
			}
			if c.p == zed {
				mustPush(t, zed, "origin")
			}
		}
	}
}
