package share

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/receipts"
)

// TestPullRefusesReceiptModeChange (session 25, revA): a chain that does
// not descend from the local tip, holding a receipt the local chain holds
// with the same blob but another mode (here executable), was taken by pull:
// the tip's check skipped an entry whose blob the local tree holds at that
// path, whatever its mode, and the commits' checks saw an append of that
// receipt. The merge pull wrote kept the local file, so `readproof verify`
// then reported the remote commit's file gone from the merge: a chain pull
// had accepted was broken. The tip's check now compares the mode too.
func TestPullRefusesReceiptModeChange(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	srvDir, a, b := twoProjects(t)
	ids := issue(t, a, key, "s", 3)
	mustPush(t, a, "origin")
	if _, err := Pull(context.Background(), b.s, "origin", Options{}); err != nil {
		t.Fatal(err)
	}
	g := a.s.Git()
	ref := receipts.SessionRef("s")
	tip := refOf(t, a, ref)
	last, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	// the last append again, its receipt's entry executable: a sibling of
	// the tip b holds, with the same message and blob
	id := ids[2]
	path := []string{id[5:6], id[6:7], id + ".json"}
	var setMode func(tree gitstore.OID, path []string) gitstore.OID
	setMode = func(tree gitstore.OID, path []string) gitstore.OID {
		entries, err := g.Tree(tree)
		if err != nil {
			t.Fatal(err)
		}
		// stock git writes it: gitstore writes no executable file
		var lines strings.Builder
		for _, e := range entries {
			mode, kind := fmt.Sprintf("%o", e.Mode), "blob"
			switch {
			case e.Mode == gitstore.ModeDir:
				kind = "tree"
			case e.Name != path[0]:
			case len(path) == 1:
				mode = "100755"
			}
			if e.Name == path[0] && len(path) > 1 {
				e.OID = setMode(e.OID, path[1:])
			}
			fmt.Fprintf(&lines, "%s %s %s\t%s\n", mode, kind, e.OID, e.Name)
		}
		cmd := gitstore.GitCommand(t, a.path(), "mktree")
		cmd.Stdin = strings.NewReader(lines.String())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("git mktree: %v", err)
		}
		return gitstore.OID(strings.TrimSpace(string(out)))
	}
	forged := last
	forged.Tree = setMode(last.Tree, path)
	fid, err := g.PutCommit(forged)
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: fid}); err != nil {
		t.Fatal(err)
	}
	git(t, a.path(), "push", "--force", srvDir, ref+":"+ref)
	file := path[0] + "/" + path[1] + "/" + path[2]
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) || !containsAll(err.Error(), []string{file, "unexpected entry"}) {
		t.Fatalf("pull of a chain holding receipt %s executable: %v, want ErrUnverified naming %s", id, err, file)
	}
}
