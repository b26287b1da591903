package gitstore

import (
	"context"
	"strings"
	"testing"

	"github.com/readproof/readproof/internal/testproc"
)

// TestFetchObjectsIntoEmptyStoreNoWarning: a clone fetches into a store
// with no branch yet; the store's branches are offered as haves
// (--negotiation-tip=refs/heads/*), and with none git warned on the
// progress stream the user sees: "warning: ignoring
// --negotiation-tip=refs/heads/* because it does not match any refs".
func TestFetchObjectsIntoEmptyStoreNoWarning(t *testing.T) {
	t.Parallel()
	remote := NewTestStore(t)
	c := mkCommit(t, remote, "from the remote")
	if err := remote.Sync(); err != nil {
		t.Fatal(err)
	}
	git(t, remote.Path(), "update-ref", "refs/heads/main", string(c))
	s := NewTestStore(t)
	var progress testproc.SyncBuffer
	tr, err := NewTransport(s.Path(), TransportOptions{Progress: &progress})
	if err != nil {
		t.Skip(err)
	}
	if err := tr.FetchObjects(context.Background(), remote.Path(), []OID{c}); err != nil {
		t.Fatal(err)
	}
	if got := git(t, s.Path(), "cat-file", "-t", string(c)); got != "commit" {
		t.Fatalf("fetched commit in the store: %q", got)
	}
	if p := progress.String(); strings.Contains(p, "warning") {
		t.Errorf("a fetch into a store without branches showed:\n%s", p)
	}
}
