package share

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
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
// Killed before the promoted manifest's conflict ref went, the run refs are
// final and that conflict ref is left beside the old name: the rename again
// removes it, with no second journal record, and reports what the whole
// rename reported (before session 11 it refused: ErrRunExists).
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
			want, ups, err := planRename(p.s, "x", "x-new", c.manifest, p.clock())
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
			// Unless the rename is done (the run refs renamed and no
			// conflict ref left under the old name for the manifest it
			// now names), the rename again completes it and reports what
			// the whole rename reports. Killed before the last conflict
			// ref went, the run refs are renamed already and the rename
			// again only removes that ref (the journal records it once).
			got := runs(t, p.s)
			left := leftConflict(t, p.s, "x", got["x"])
			if got["x"] != c.x || got["x-new"] != c.xNew || left {
				tip, _ := p.s.Git().Ref(store.JournalRef)
				rn, err := RenameRun(p.s, "x", "x-new", c.manifest, p.clock())
				if err != nil {
					t.Fatalf("%s, killed after %d (runs %v, conflict ref left %v): the rename again: %v", c.name, k, got, left, err)
				}
				if *rn != *want {
					t.Fatalf("%s, killed after %d: the rename again reports %+v, the whole rename %+v", c.name, k, *rn, *want)
				}
				if after, _ := p.s.Git().Ref(store.JournalRef); left && got["x"] == c.x && got["x-new"] == c.xNew && after != tip {
					t.Fatalf("%s, killed after %d: removing the conflict ref left moved the journal (%s to %s): a second rename record", c.name, k, tip, after)
				}
			}
			if got := runs(t, p.s); leftConflict(t, p.s, "x", got["x"]) {
				t.Fatalf("%s, killed after %d, then completed: conflict ref x/%s left beside run x", c.name, k, got["x"])
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
				if out, err := exec.Command("git", "--git-dir", filepath.Join(p.dir, ".readproof"), "for-each-ref", store.ConflictRunsPrefix).Output(); err != nil || len(out) != 0 {
					t.Fatalf("%s, killed after %d, then completed: conflict refs left: %s (%v)", c.name, k, out, err)
				}
			}
		}
	}
}

// leftConflict reports whether a conflict ref run/m is left that names m
// (m the manifest run ref run names, "" for none).
func leftConflict(t testing.TB, s *store.Store, run, m string) bool {
	t.Helper()
	if m == "" {
		return false
	}
	o, err := s.Git().Ref(store.ConflictRunRef(run, gitstore.OID(m)))
	if err != nil && !isNotFound(err) {
		t.Fatal(err)
	}
	return o != ""
}

// TestRenameLeftConflictStrict: the rename again completes a promoting
// rename killed before its last ref update only in that state: run x-new
// names the renamed manifest mb, run x the promoted ma, the conflict ref
// x/ma names ma, and the journal records the rename of x to x-new with
// manifest mb. With the record missing or naming another manifest, or the
// conflict ref gone, it refuses as for any new id that names another
// manifest (ErrRunExists); with --manifest naming neither mb nor a
// conflicting manifest, as for any such manifest (ErrNoConflict).
func TestRenameLeftConflictStrict(t *testing.T) {
	t.Parallel()
	dir, _, b, ma, mb := runIDConflict(t)
	// killed leaves the promoting rename killed before its last update,
	// with the journal's record written by record (nil: the rename's own).
	killed := func(t *testing.T, record func(p *project) gitstore.RefUpdate) *project {
		t.Helper()
		p := b.copyProject(t, dir, dir)
		_, ups, err := planRename(p.s, "x", "x-new", "", p.clock())
		if err != nil {
			t.Fatal(err)
		}
		if len(ups) != 4 || ups[len(ups)-1].Name != store.ConflictRunRef("x", gitstore.OID(ma.ID)) {
			t.Fatalf("the promoting rename publishes %+v, want the journal, two run refs and the conflict ref x/%s last", ups, ma.ID)
		}
		if record != nil {
			ups[0] = record(p)
		}
		if err := p.s.Git().Update(ups[:3]...); err != nil {
			t.Fatal(err)
		}
		if got := runs(t, p.s); got["x"] != ma.ID || got["x-new"] != mb.ID || !leftConflict(t, p.s, "x", ma.ID) {
			t.Fatalf("not the state a kill before the last update leaves: runs %v", got)
		}
		return p
	}
	// recordOf writes a journal record of a rename from to to of manifest m.
	recordOf := func(from, to string, m gitstore.OID) func(p *project) gitstore.RefUpdate {
		return func(p *project) gitstore.RefUpdate {
			g := p.s.Git()
			tip, err := g.Ref(store.JournalRef)
			if err != nil {
				t.Fatal(err)
			}
			tree, err := store.JournalTree(g, []gitstore.OID{tip}, "")
			if err != nil {
				t.Fatal(err)
			}
			sig := signature(p.clock())
			j, err := g.PutCommit(gitstore.Commit{Tree: tree, Parents: []gitstore.OID{tip}, Author: sig, Committer: sig, Message: store.JournalRenameMessage(from, to, m)})
			if err != nil {
				t.Fatal(err)
			}
			return gitstore.RefUpdate{Name: store.JournalRef, Old: tip, New: j}
		}
	}
	want := Rename{From: "x", To: "x-new", Manifest: mb.ID, Promoted: ma.ID}
	for _, manifest := range []string{"", mb.ID} {
		p := killed(t, nil)
		tip, _ := p.s.Git().Ref(store.JournalRef)
		rn, err := RenameRun(p.s, "x", "x-new", manifest, p.clock())
		if err != nil || *rn != want {
			t.Fatalf("--manifest %q: the rename again: %+v, %v; want %+v", manifest, rn, err, want)
		}
		if after, _ := p.s.Git().Ref(store.JournalRef); after != tip || leftConflict(t, p.s, "x", ma.ID) {
			t.Fatalf("--manifest %q: journal %s (was %s), conflict ref left %v", manifest, after, tip, leftConflict(t, p.s, "x", ma.ID))
		}
		// done: the rename again refuses, as it did before a kill could
		// leave anything
		if _, err := RenameRun(p.s, "x", "x-new", manifest, p.clock()); err == nil {
			t.Fatalf("--manifest %q: the rename a third time succeeded", manifest)
		}
	}
	refused := []struct {
		name     string
		record   func(p *project) gitstore.RefUpdate
		manifest string
		want     error
	}{
		{"no record", func(p *project) gitstore.RefUpdate {
			return gitstore.RefUpdate{Name: "refs/readproof-test/unused", New: gitstore.OID(mb.ID)}
		}, "", ErrRunExists},
		{"record of the promoted manifest", recordOf("x", "x-new", gitstore.OID(ma.ID)), "", ErrRunExists},
		{"record of another new id", recordOf("x", "x-other", gitstore.OID(mb.ID)), "", ErrRunExists},
		{"record of another old id", recordOf("y", "x-new", gitstore.OID(mb.ID)), "", ErrRunExists},
		{"another manifest", nil, strings.Repeat("ab", 20), ErrNoConflict},
	}
	for _, c := range refused {
		p := killed(t, c.record)
		if _, err := RenameRun(p.s, "x", "x-new", c.manifest, p.clock()); !errors.Is(err, c.want) {
			t.Fatalf("%s: the rename again: %v, want %v", c.name, err, c.want)
		}
		if !leftConflict(t, p.s, "x", ma.ID) {
			t.Fatalf("%s: the refused rename removed the conflict ref", c.name)
		}
	}
	// the conflict ref gone (a pull removed it): nothing to complete
	p := killed(t, nil)
	if err := p.s.Git().Update(gitstore.RefUpdate{Name: store.ConflictRunRef("x", gitstore.OID(ma.ID)), Old: gitstore.OID(ma.ID)}); err != nil {
		t.Fatal(err)
	}
	if _, err := RenameRun(p.s, "x", "x-new", "", p.clock()); !errors.Is(err, ErrRunExists) {
		t.Fatalf("no conflict ref left: the rename again: %v, want %v", err, ErrRunExists)
	}
}
