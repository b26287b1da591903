package share

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// TestCloneRecordsStrayManifest: a clone whose remote names a run the
// remote's journal does not record (main moved back past its record)
// records it on the new journal, as before the clone stopped listing the
// journal with git rev-list (the run is then asked of git, the one case it
// still is); runs the journal records are not recorded again.
func TestCloneRecordsStrayManifest(t *testing.T) {
	t.Parallel()
	p := newProject(t, map[string]string{"a": "alpha\n", "b": "beta\n"})
	m1 := p.run(t, "r1", "a")
	m2 := p.run(t, "r2", "b")
	tip := git(t, p.path(), "rev-parse", "refs/heads/main")
	if first := git(t, p.path(), "log", "-1", "--format=%s", tip); !strings.HasPrefix(first, "record run r2") {
		t.Fatalf("main's tip is %q, want the record of r2", first)
	}
	git(t, p.path(), "update-ref", "refs/heads/main", tip+"^1", tip)

	res, err := Clone(context.Background(), p.path(), filepath.Join(t.TempDir(), "c"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Recorded) != 1 || res.Recorded[0].RunID != "r2" || res.Recorded[0].Manifest != m2.ID {
		t.Fatalf("recorded %+v, want r2 %s only (r1 %s is on the journal)", res.Recorded, m2.ID, m1.ID)
	}
	if len(res.NewRuns) != 2 || res.Verified != 2 {
		t.Fatalf("new runs %+v, verified %d", res.NewRuns, res.Verified)
	}
}
