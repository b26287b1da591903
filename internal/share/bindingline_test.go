package share

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/receipts"
)

// TestPullRefusesEditedBinding: a remote whose receipt chain binds a
// version 2 receipt, by a line added to its append commit's message, to a
// manifest its MAC does not name (docs/receipts.md, "Storage") is refused
// by pull, naming the receipt, and nothing is adopted; clone refuses it
// too.
func TestPullRefusesEditedBinding(t *testing.T) {
	t.Parallel()
	srvDir, b, id, _ := pushEditedAppend(t, func(id, msg string) string {
		if !strings.HasPrefix(msg, "receipt "+id+"\n") || strings.Contains(msg, "run-manifest") {
			t.Fatalf("append commit message %q", msg)
		}
		return msg + "run-manifest: " + strings.Repeat("4b", 20) + "\n"
	})
	requireRefusedByPullAndClone(t, b, srvDir, "a chain with an edited binding line",
		[]string{id, "tampered binding"}, []string{id})
}

// TestPullRefusesAppendNamingNoReceipt: an append commit whose first line
// was edited so that it names no receipt escaped the binding check (it is
// found by that line), so a version 2 receipt moved to another manifest
// came in through pull; a one-parent commit of a receipt chain whose message
// names no receipt is refused, by pull and by clone, changing no ref.
func TestPullRefusesAppendNamingNoReceipt(t *testing.T) {
	t.Parallel()
	srvDir, b, _, edited := pushEditedAppend(t, func(_, msg string) string {
		return "edited " + msg + "run-manifest: " + strings.Repeat("4b", 20) + "\n"
	})
	requireRefusedByPullAndClone(t, b, srvDir, "a chain whose append names no receipt",
		[]string{string(edited), "names no receipt"}, []string{"names no receipt"})
}

// TestPullRefusesEmptyAppendNamingNoReceipt: a one-parent commit that adds
// no file (its tree is its parent's) and whose first line names no receipt
// is refused by the check of the message alone: the check of added files
// has nothing to say of it.
func TestPullRefusesEmptyAppendNamingNoReceipt(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir, a, b := twoProjects(t)
	issue(t, a, key, "s", 1)
	g := a.s.Git()
	old := refOf(t, a, receipts.SessionRef("s"))
	c, err := g.Commit(old)
	if err != nil {
		t.Fatal(err)
	}
	c.Parents = []gitstore.OID{old}
	c.Message = "tidy up\n"
	empty, err := g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), Old: old, New: empty}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	requireRefusedByPullAndClone(t, b, srvDir, "a chain with an empty commit naming no receipt",
		[]string{string(empty), `its message "tidy up" names no receipt`}, []string{`its message "tidy up" names no receipt`})
}

// pushEditedAppend issues one receipt of session "s" in a project, replaces
// the message of its append commit by edit(id, message), moves the chain to
// the edited commit and pushes it to a new server. It returns the server, a
// second project with that server as its remote "origin", the receipt's id
// and the edited commit.
func pushEditedAppend(t *testing.T, edit func(id, msg string) string) (srvDir string, b *project, id string, edited gitstore.OID) {
	t.Helper()
	key := testKey(t)
	srvDir, a, b := twoProjects(t)
	id = issue(t, a, key, "s", 1)[0]
	g := a.s.Git()
	old := refOf(t, a, receipts.SessionRef("s"))
	c, err := g.Commit(old)
	if err != nil {
		t.Fatal(err)
	}
	c.Message = edit(id, c.Message)
	edited, err = g.PutCommit(c)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: receipts.SessionRef("s"), Old: old, New: edited}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	return srvDir, b, id, edited
}

// requireRefusedByPullAndClone fails the test unless a pull of "origin" into
// b fails with ErrUnverified, its message holding each of pullWants, and
// changes no ref of b, and a clone of srvDir fails with ErrUnverified, its
// message holding each of cloneWants.
func requireRefusedByPullAndClone(t *testing.T, b *project, srvDir, what string, pullWants, cloneWants []string) {
	t.Helper()
	before := refsExcept(t, b.path(), "refs/nothing-excluded/")
	_, err := Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !containsAll(err.Error(), pullWants) {
		t.Fatalf("pull of %s: %v, want ErrUnverified naming %q", what, err, pullWants)
	}
	if after := refsExcept(t, b.path(), "refs/nothing-excluded/"); after != before {
		t.Fatalf("refused pull changed refs:\n%s\nwant\n%s", after, before)
	}
	if _, err := Clone(context.Background(), srvDir, filepath.Join(t.TempDir(), "c"), Options{}); !errors.Is(err, ErrUnverified) || !containsAll(err.Error(), cloneWants) {
		t.Fatalf("clone of %s: %v, want ErrUnverified naming %q", what, err, cloneWants)
	}
}

// containsAll reports whether s holds every one of subs.
func containsAll(s string, subs []string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

// TestPullRefusesReceiptWithoutItsAppend: a receipt reaches a chain only by
// its own append commit, whose binding line pull, clone and the guarded
// remote check; one that a merge adds, though none of its parents holds
// it, or that an append adds beside the receipt its first line names,
// came in without one and is refused by all three, naming the receipt's
// file and the commit, with nothing adopted.
func TestPullRefusesReceiptWithoutItsAppend(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"merge", "beside"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			key := testKey(t)
			srvDir, a, b := twoProjects(t)
			ids := issue(t, a, key, "s", 3)
			g := a.s.Git()
			ref := receipts.SessionRef("s")
			tip := refOf(t, a, ref)
			chain := []gitstore.Commit{} // oldest first
			for c := tip; c != ""; {
				cm, err := g.Commit(c)
				if err != nil {
					t.Fatal(err)
				}
				chain = append([]gitstore.Commit{cm}, chain...)
				c = ""
				if len(cm.Parents) > 0 {
					c = cm.Parents[0]
				}
			}
			var forged gitstore.Commit
			switch kind {
			case "merge":
				// the first append again, at another time: the merge of
				// the two holds the other two receipts, which neither does
				again := chain[0]
				again.Committer.When = again.Committer.When.Add(time.Second)
				second, err := g.PutCommit(again)
				if err != nil {
					t.Fatal(err)
				}
				first := chain[1].Parents[0]
				forged = gitstore.Commit{Tree: chain[2].Tree, Parents: sortedPair(first, second), Author: again.Author, Committer: again.Committer,
					Message: "merge receipts of sessions/s\n"}
			case "beside":
				// the second append, with the third receipt beside it
				forged = chain[1]
				forged.Tree = chain[2].Tree
			}
			id, err := g.PutCommit(forged)
			if err != nil {
				t.Fatal(err)
			}
			if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: id}); err != nil {
				t.Fatal(err)
			}
			strays := ids[2:] // the receipts that came in without their append commits
			if kind == "merge" {
				strays = ids[1:]
			}
			var paths []string
			for _, s := range strays {
				paths = append(paths, s[5:6]+"/"+s[6:7]+"/"+s+".json")
			}
			path := paths[len(paths)-1]
			why := map[string]string{"merge": "a merge of 2 commits adds it, and none of them holds it", "beside": "the commit appending receipt " + ids[1] + " adds it beside that receipt"}[kind]
			mustPush(t, a, "origin")
			requireRefusedByPullAndClone(t, b, srvDir, "a receipt "+kind, append([]string{string(id), why}, paths...), append([]string{why}, paths...))
			_, err = Pull(context.Background(), b.s, "origin", Options{})
			if h := hint.Of(err); !strings.Contains(h, "someone wrote commit "+string(id)+" by hand (it holds ") || !slices.ContainsFunc(paths, func(p string) bool { return strings.Contains(h, "(it holds "+p+")") }) {
				t.Errorf("pull's hint %q does not name commit %s and one of %s", h, id, paths)
			}
			u := guardedRemote(t, t.TempDir(), "guarded.git")
			if out := pushRefused(t, a.path(), u, ref+":"+ref); !strings.Contains(out, path) || !strings.Contains(out, why) {
				t.Errorf("the guarded remote refused the chain without naming %s (%q):\n%s", path, why, out)
			}
		})
	}
}
