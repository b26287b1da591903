package share

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
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
