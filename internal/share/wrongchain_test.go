package share

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestPullRefusesRecordsOnAnotherChain: a remote ref that names another
// chain's records (the observation chain of readproof://demo/doc under the
// key demo/other, the tag chain of doc@prod under doc@qa: a copied ref, a
// forged one) is refused by pull and clone, as verify refuses it. Before,
// both took it (its commits are good observations and tag moves, of
// another chain), and the store then failed verify: "observation of
// readproof://demo/doc on the chain of readproof://demo/other".
func TestPullRefusesRecordsOnAnotherChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := bareServer(t, t.TempDir(), "shared.git")
	alice := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, alice, "origin", shared)
	alice.run(t, "r1", "doc")
	alice.tag(t, "doc", "prod")
	mustPush(t, alice, "origin")
	bob := newProject(t, map[string]string{"doc": "one\n"})
	addRemote(t, bob, "origin", shared)
	mustPull(t, bob, "origin")

	for _, c := range []struct{ ref, from, want string }{
		{store.ResourcesPrefix + "demo/other", store.ResourcesPrefix + "demo/doc", "observation of readproof://demo/doc on the chain of readproof://demo/other"},
		{store.TagsPrefix + "demo/doc/qa", store.TagsPrefix + "demo/doc/prod", "move of readproof://demo/doc@prod on the chain of readproof://demo/doc@qa"},
	} {
		git(t, shared, "update-ref", c.ref, c.from)
		before := refsExcept(t, bob.path(), RemotesPrefix)
		// bob holds every commit already; a new store holds none
		for _, p := range []*project{bob, newProject(t, map[string]string{"doc": "one\n"})} {
			if p != bob {
				addRemote(t, p, "origin", shared)
			}
			if res, err := Pull(ctx, p.s, "origin", Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("pull of %s naming %s's records: %+v, %v; want ErrUnverified: %s", c.ref, c.from, res, err, c.want)
			}
		}
		if after := refsExcept(t, bob.path(), RemotesPrefix); after != before {
			t.Fatalf("a refused pull moved refs:\n%s\n%s", before, after)
		}
		if _, err := Clone(ctx, shared, filepath.Join(t.TempDir(), "clone"), Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("clone with %s naming %s's records: %v; want ErrUnverified: %s", c.ref, c.from, err, c.want)
		}
		git(t, shared, "update-ref", "-d", c.ref)
	}
}

// TestPullRefusesTagMoveWithAnotherResourcesObservation: a remote tag move
// of doc@prod whose observation copy is readproof://demo/other's (the same
// bytes, so the same snapshot is recorded for both) is refused by pull, as
// get refuses it (it would put the other URI into a manifest as doc@prod)
// and verify names it.
func TestPullRefusesTagMoveWithAnotherResourcesObservation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	shared := bareServer(t, t.TempDir(), "shared.git")
	alice := newProject(t, map[string]string{"doc": "one\n", "other": "one\n"})
	addRemote(t, alice, "origin", shared)
	alice.run(t, "r1", "doc", "other")
	good := alice.tag(t, "doc", "prod")
	mustPush(t, alice, "origin")
	bob := newProject(t, map[string]string{"doc": "one\n", "other": "one\n"})
	addRemote(t, bob, "origin", shared)
	mustPull(t, bob, "origin")

	g := alice.s.Git()
	forged := *good
	obs := *good.Observation
	obs.URI = "readproof://demo/other"
	forged.Observation, forged.Commit = &obs, ""
	tj, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := g.PutBlob(append(tj, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "content", Mode: gitstore.ModeFile, OID: gitstore.OID(good.Snapshot)}, {Name: "tag.json", Mode: gitstore.ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	c, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{gitstore.OID(good.Commit)}, Author: sig, Committer: sig, Message: "tag\n"})
	if err != nil {
		t.Fatal(err)
	}
	ref := store.TagsPrefix + "demo/doc/prod"
	if err := g.Update(gitstore.RefUpdate{Name: ref, Old: gitstore.OID(good.Commit), New: c}); err != nil {
		t.Fatal(err)
	}
	git(t, alice.path(), "push", "--quiet", shared, ref+":"+ref)

	before := refsExcept(t, bob.path(), RemotesPrefix)
	const want = "observation copy is of readproof://demo/other"
	if res, err := Pull(ctx, bob.s, "origin", Options{}); !errors.Is(err, ErrUnverified) || !strings.Contains(err.Error(), want) {
		t.Fatalf("pull of a move of doc@prod recording other's observation: %+v, %v; want ErrUnverified: %s", res, err, want)
	}
	if after := refsExcept(t, bob.path(), RemotesPrefix); after != before {
		t.Fatalf("a refused pull moved refs:\n%s\n%s", before, after)
	}
}
