package storecheck_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/internal/storecheck"
)

// TestTagMoveWithAnotherResourcesObservation: a tag move of URI@TAG whose
// observation copy is another resource's (same bytes, so the same
// snapshot is recorded for both) is refused by get and run mount as a
// damaged tag, whose hint sends the user to verify: verify names it.
func TestTagMoveWithAnotherResourcesObservation(t *testing.T) {
	t.Parallel()
	p := healthy(t)
	g := p.s.Git()
	u := mustURI(t, uriOf("policies/shipping.md"))
	good, err := p.s.SetTag(u, "rel", "")
	if err != nil {
		t.Fatal(err)
	}
	forged := *good
	obs := *good.Observation
	obs.URI = uriOf("policies/refunds.md")
	forged.Observation = &obs
	forged.Commit = ""
	tj, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	blob, err := g.PutBlob(append(tj, '\n'))
	if err != nil {
		t.Fatal(err)
	}
	tree := putFiles(t, g, map[string]gitstore.OID{"content": gitstore.OID(good.Snapshot), "tag.json": blob})
	c, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{gitstore.OID(good.Commit)}, Author: sig(), Committer: sig(), Message: "tag\n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Update(gitstore.RefUpdate{Name: store.TagsPrefix + u.Key() + "/rel", Old: gitstore.OID(good.Commit), New: c}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.s.Resolve(context.Background(), u.String()+"@rel"); err == nil || !strings.Contains(err.Error(), "readproof://demo/policies/refunds") {
		t.Errorf("get of the forged tag: %v, want it refused naming the other resource", err)
	}
	rep := p.check(t, storecheck.Options{})
	if len(find(rep, storecheck.Broken, "tag "+u.String()+"@rel", "readproof://demo/policies/refunds")) != 1 {
		t.Fatalf("verify does not name the tag move whose observation is another resource's:\n%s", problems(rep))
	}
}
