package store

import (
	"context"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// TestCurrentPendingErrorNamesResource (session 22): an observation that
// cannot be read is reported as "resource URI: ..." when it is the
// published tip. Before, the same failure on an observation pending in the
// batch (a run that reads a resource twice) came without the resource.
func TestCurrentPendingErrorNamesResource(t *testing.T) {
	toml, files, uris := manyDocs(1, 100)
	f := newFixture(t, toml, files)
	ctx := context.Background()
	b := newBatch()
	if _, err := f.s.resolve(ctx, uris[0], b); err != nil {
		t.Fatal(err)
	}
	// the pending observation's commit lost its observation.json
	tree, err := f.s.git.PutTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	old, err := f.s.git.Commit(b.obs[0].New)
	if err != nil {
		t.Fatal(err)
	}
	bad, err := f.s.git.PutCommit(gitstore.Commit{Tree: tree, Author: old.Author, Committer: old.Committer, Message: "broken\n"})
	if err != nil {
		t.Fatal(err)
	}
	b.obs[0].New = bad
	_, err = f.s.resolve(ctx, uris[0], b)
	if err == nil {
		t.Fatal("resolve over a pending observation without observation.json succeeded")
	}
	if want := "resource " + uris[0] + ": "; !strings.Contains(err.Error(), want) {
		t.Errorf("resolve over a broken pending observation: %v; want it to name %q as the published path does", err, want)
	}
}
