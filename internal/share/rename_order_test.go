package share

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/readproof/readproof/internal/storecheck"
)

// TestRenameKilledAtEachRef: a process killed during `conflicts rename`
// leaves a prefix of its ref updates done (gitstore publishes them in the
// order given: TestUpdateRenamesInGivenOrder). Every prefix, for a plain
// rename, one that promotes the waiting conflicting manifest and one of a
// conflicting manifest (--manifest), verifies with no broken problem, and
// the same rename run again completes it. With the journal published last
// (before session 10), the prefix that holds the new run ref alone was
// broken: "manifest.json records run x, but the ref names run x-new".
// TestKilledRenames kills the real command.
func TestRenameKilledAtEachRef(t *testing.T) {
	t.Parallel()
	dir, _, b, ma, mb := runIDConflict(t) // b: run x is mb, ma waits under x as a conflict
	cases := []struct {
		name, manifest string
		x, xNew        string // the run refs once renamed
	}{
		{"promote", "", ma.ID, mb.ID},
		{"manifest", ma.ID, mb.ID, ma.ID},
	}
	for _, c := range cases {
		for k := 1; ; k++ {
			p := b.copyProject(t, dir, dir)
			_, ups, err := planRename(p.s, "x", "x-new", c.manifest, p.clock())
			if err != nil {
				t.Fatal(err)
			}
			if ups[0].Name != "refs/heads/main" {
				t.Fatalf("%s: the rename publishes %s first, want the journal's record", c.name, ups[0].Name)
			}
			if k >= len(ups) {
				break
			}
			if err := p.s.Git().Update(ups[:k]...); err != nil {
				t.Fatal(err)
			}
			rep, err := storecheck.Check(context.Background(), p.s, storecheck.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if rep.Broken() != 0 {
				t.Fatalf("%s, killed after %d of %d ref updates: verify reports broken:\n%+v", c.name, k, len(ups), rep.Problems)
			}
			// Unless the run refs are renamed already (killed before the
			// last conflict ref went: it names a manifest the old name now
			// holds, is no longer listed, and the next pull removes it),
			// the rename again completes it.
			if got := runs(t, p.s); got["x"] != c.x || got["x-new"] != c.xNew {
				if _, err := RenameRun(p.s, "x", "x-new", c.manifest, p.clock()); err != nil {
					t.Fatalf("%s, killed after %d: the rename again: %v", c.name, k, err)
				}
			}
			if got := runs(t, p.s); got["x"] != c.x || got["x-new"] != c.xNew {
				t.Fatalf("%s, killed after %d, then completed: runs %v, want x %s and x-new %s", c.name, k, got, c.x, c.xNew)
			}
			if rep, err := storecheck.Check(context.Background(), p.s, storecheck.Options{}); err != nil || !rep.OK() {
				t.Fatalf("%s, killed after %d, then completed: %v %+v", c.name, k, err, rep)
			}
			if rep, err := Conflicts(p.s); err != nil || len(rep.Runs) != 0 {
				t.Fatalf("%s, killed after %d, then completed: conflicts listed: %+v (%v)", c.name, k, rep, err)
			}
			if k < len(ups)-1 {
				// a conflict ref can be left only by the last update
				if out, err := exec.Command("git", "--git-dir", filepath.Join(p.dir, ".readproof"), "for-each-ref", ConflictRunsPrefix).Output(); err != nil || len(out) != 0 {
					t.Fatalf("%s, killed after %d, then completed: conflict refs left: %s (%v)", c.name, k, out, err)
				}
			}
		}
	}
}
