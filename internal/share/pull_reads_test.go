package share

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
	"github.com/readproof/readproof/probe"
)

// refListings counts the listings (Refs) of each prefix.
type refListings struct {
	gitstore.Store
	n map[string]int
}

func (c *refListings) Refs(prefix string) ([]gitstore.Ref, error) {
	c.n[prefix]++
	return c.Store.Refs(prefix)
}

// TestPullListsRunRefsOnce: a pull reads the local run refs (10^5 at
// 10^5 runs) once, with the probe key too: before session 19 it read them
// in upToDate, again in the plan, and a third time (with the tracking run
// refs a second time) for the verdict MAC check.
func TestPullListsRunRefsOnce(t *testing.T) {
	t.Parallel()
	needGit(t)
	dir := bareServer(t, t.TempDir(), "s.git")
	importRuns(t, dir, 0, 20)
	dst := filepath.Join(t.TempDir(), "clone")
	if _, err := Clone(context.Background(), dir, dst, Options{}); err != nil {
		t.Fatal(err)
	}
	importRuns(t, dir, 20, 5)
	s, err := store.Open(dst, nil, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	keys, err := probe.DeriveKeys(bytes.Repeat([]byte{7}, 32))
	if err != nil {
		t.Fatal(err)
	}
	tracking := RemotesPrefix + "origin/runs/"
	for _, c := range []struct {
		what                string
		newRuns             int
		localRuns, tracking int
	}{{"a pull of 5 new runs", 5, 1, 1}, {"a pull with nothing new", 0, 1, 0}} {
		g := &refListings{Store: s.Git(), n: map[string]int{}}
		res, err := pullWith(context.Background(), s, g, "origin", Options{ProbeKeys: &keys})
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NewRuns) != c.newRuns {
			t.Fatalf("%s: pulled %d runs", c.what, len(res.NewRuns))
		}
		if g.n[store.RunsPrefix] != c.localRuns || g.n[tracking] != c.tracking {
			t.Errorf("%s listed %s %d times and %s %d times, want %d and %d (listings: %v)",
				c.what, store.RunsPrefix, g.n[store.RunsPrefix], tracking, g.n[tracking], c.localRuns, c.tracking, g.n)
		}
	}
}
