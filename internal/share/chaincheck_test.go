package share

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// TestChainCheckHashesSnapshotOnce: checking every commit of a resource
// chain reads and hashes each snapshot once however many observations
// record it (a document observed again unchanged), and an observation that
// records another hash for a snapshot already checked is still refused.
func TestChainCheckHashesSnapshotOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := newProject(t, map[string]string{"doc": "the text\n"})
	p.run(t, "r-1", "doc")
	g := p.s.Git()
	tr, err := gitstore.NewTransport(g.Path(), gitstore.TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tip, err := g.Ref(store.ResourcesPrefix + "demo/doc")
	if err != nil {
		t.Fatal(err)
	}
	// the document observed twice more, unchanged
	sig := gitstore.Signature{Name: "readproof", Email: "readproof@localhost", When: time.Date(2026, 11, 30, 0, 0, 0, 0, time.UTC)}
	for range 2 {
		c, err := g.Commit(tip)
		if err != nil {
			t.Fatal(err)
		}
		if tip, err = g.PutCommit(gitstore.Commit{Tree: c.Tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: c.Message}); err != nil {
			t.Fatal(err)
		}
	}
	verified := verifiedSet{}
	if f := checkObservations(ctx, g, tr, "demo/doc", tip, "", verified); len(f) > 0 {
		t.Fatal(f)
	}
	obs, snaps := 0, 0
	for k := range verified {
		switch {
		case k.kind == "observation of readproof://demo/doc":
			obs++
		case strings.HasPrefix(k.kind, "snapshot "):
			snaps++
		}
	}
	if obs < 3 || snaps != 1 {
		t.Fatalf("%d observations checked, %d snapshot hashes remembered; want 3 or more, and 1", obs, snaps)
	}
	// the same snapshot recorded under another hash
	o, c, err := observationAt(g, tip)
	if err != nil {
		t.Fatal(err)
	}
	o.ContentHash = contentHash([]byte("other bytes\n"))
	data, _ := json.MarshalIndent(o, "", "  ")
	ob, _ := g.PutBlob(append(data, '\n'))
	tree, err := g.PutTree([]gitstore.TreeEntry{{Name: "content", Mode: gitstore.ModeFile, OID: gitstore.OID(o.Snapshot)}, {Name: "observation.json", Mode: gitstore.ModeFile, OID: ob}})
	if err != nil {
		t.Fatal(err)
	}
	forged, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: c.Message})
	if err != nil {
		t.Fatal(err)
	}
	if f := checkObservations(ctx, g, tr, "demo/doc", forged, tip, verified); len(f) != 1 || !strings.Contains(f[0], "hashes to") {
		t.Fatalf("forged hash of a checked snapshot: %q", f)
	}
}
