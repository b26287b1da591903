package share

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/receipts"
)

// TestPullHintNamesTheCommitThatDrops: a merge of a receipt chain whose
// tree drops a receipt its first parent holds (both parents as readproof
// wrote them) is refused, and the hint names the merge as the commit
// someone wrote by hand, not the parent whose file it drops: before, it
// said the parent was written by hand and held the receipt, though
// readproof wrote both.
func TestPullHintNamesTheCommitThatDrops(t *testing.T) {
	t.Parallel()
	key := testKey(t)
	_, a, b := twoProjects(t)
	ids := issue(t, a, key, "s", 2)
	g := a.s.Git()
	ref := receipts.SessionRef("s")
	tip := refOf(t, a, ref)
	second, err := g.Commit(tip)
	if err != nil {
		t.Fatal(err)
	}
	first, err := g.Commit(second.Parents[0])
	if err != nil {
		t.Fatal(err)
	}
	sig := signature(a.clock())
	merge, err := g.PutCommit(gitstore.Commit{Tree: first.Tree, Parents: []gitstore.OID{tip, second.Parents[0]}, Author: sig, Committer: sig, Message: "merge receipts of sessions/s\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: tip, New: merge}); err != nil {
		t.Fatal(err)
	}
	mustPush(t, a, "origin")
	_, err = Pull(context.Background(), b.s, "origin", Options{})
	if !errors.Is(err, ErrUnverified) {
		t.Fatalf("pull of a receipt chain whose merge drops receipt %s: %v, want ErrUnverified", ids[1], err)
	}
	// The refusal names the shallowest entry of the receipt's path
	// (d/d/<id>.json) the merge's tree lacks: its first fan-out directory,
	// or a deeper one when the first receipt shares it.
	d := ids[1][5:]
	named := false
	for _, p := range []string{d[0:1], d[0:1] + "/" + d[1:2], d[0:1] + "/" + d[1:2] + "/" + ids[1] + ".json"} {
		named = named || strings.Contains(err.Error(), "(commit "+string(merge)+") "+p+": the file of parent "+string(tip)+" is gone")
	}
	if !named {
		t.Fatalf("pull's refusal does not name the dropped receipt %s of parent %s: %v", ids[1], tip, err)
	}
	h := hint.Of(err)
	if !strings.Contains(h, "someone wrote commit "+string(merge)+" by hand") {
		t.Fatalf("pull's hint %q does not name merge %s, the commit that drops the receipt", h, merge)
	}
	if strings.Contains(h, string(tip)) {
		t.Fatalf("pull's hint %q names parent %s, which readproof wrote, as written by hand", h, tip)
	}
}
