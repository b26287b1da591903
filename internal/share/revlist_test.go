package share

import (
	"context"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
)

// TestRevListAgreesWithGit: revList answers `git rev-list --parents tip
// ^stop` with the same commits and parents, on random histories with
// merges and several roots, whether revListNear settled it in-process or
// left it to git (a walk that met a root while stop is set, a long one).
// The in-process walk answers the pull's common case, a fast-forward of a
// few commits, and a history without stop.
func TestRevListAgreesWithGit(t *testing.T) {
	t.Parallel()
	needGit(t)
	ctx := context.Background()
	g := gitstore.NewTestStore(t)
	tr, err := gitstore.NewTransport(g.Path(), gitstore.TransportOptions{})
	if err != nil {
		t.Skip(err)
	}
	sig := gitstore.Signature{Name: "a", Email: "a@example.invalid", When: time.Unix(1700000000, 0).UTC()}
	rng := rand.New(rand.NewPCG(10, 3))
	var ids []gitstore.OID
	for i := 0; i < 80; i++ {
		var parents []gitstore.OID
		if len(ids) > 0 && (i%25 != 0) {
			parents = append(parents, ids[len(ids)-1-rng.IntN(min(len(ids), 6))])
			if rng.IntN(5) == 0 {
				if p := ids[rng.IntN(len(ids))]; p != parents[0] {
					parents = append(parents, p)
				}
			}
		}
		id, err := g.PutCommit(gitstore.Commit{Tree: emptyTreeOf(t, g), Parents: parents, Author: sig, Committer: sig, Message: "c" + string(rune('a'+i%26)) + "\n"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := g.Sync(); err != nil {
		t.Fatal(err)
	}
	sorted := func(cs []gitstore.RevListCommit) []gitstore.RevListCommit {
		out := append([]gitstore.RevListCommit(nil), cs...)
		for i := range out {
			if len(out[i].Parents) == 0 {
				out[i].Parents = nil
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
		return out
	}
	inProcess := 0
	check := func(tip, stop gitstore.OID) {
		t.Helper()
		var exclude []gitstore.OID
		if stop != "" {
			exclude = []gitstore.OID{stop}
		}
		want, err := tr.RevList(ctx, []gitstore.OID{tip}, exclude)
		if err != nil {
			t.Fatal(err)
		}
		got, err := revList(ctx, g, tr, tip, stop)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(sorted(got), sorted(want)) {
			t.Fatalf("rev-list %s ^%s: got %d commits, git %d", tip, stop, len(got), len(want))
		}
		if _, ok := revListNear(g, tip, stop, revListBudget); ok {
			inProcess++
		}
	}
	for i := 0; i < len(ids); i += 4 {
		check(ids[i], "")
	}
	for i := 0; i < 50; i++ {
		check(ids[rng.IntN(len(ids))], ids[rng.IntN(len(ids))])
	}
	for i := 3; i < len(ids); i += 4 { // a fast-forward by a few commits
		check(ids[i], ids[i-1-rng.IntN(3)])
	}
	if inProcess < len(ids)/4 {
		t.Fatalf("the in-process walk settled %d questions: the test proves little", inProcess)
	}
	// a budget too small leaves it to git
	if _, ok := revListNear(g, ids[len(ids)-1], "", 3); ok {
		t.Fatal("a walk beyond its budget settled")
	}
}
