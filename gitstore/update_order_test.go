package gitstore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestUpdateRenamesInGivenOrder: an Update moves its loose refs in the
// order the caller lists them, not in the (name) order their locks are
// taken in, so a caller can put the ref that records the others last and a
// process killed among the renames never leaves a record of a missing ref.
func TestUpdateRenamesInGivenOrder(t *testing.T) {
	s := NewTestStore(t)
	base := mkCommit(t, s, "base")
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/main", New: base},
		RefUpdate{Name: "refs/heads/readproof/open/r1", New: base},
	)
	c := mkCommit(t, s, "next", base)
	var order []string
	publishTrace = func(name string) { order = append(order, name) }
	defer func() { publishTrace = nil }()
	given := []RefUpdate{
		{Name: "refs/tags/readproof/runs/r1", New: c},
		{Name: "refs/heads/readproof/open/r1", Old: base},
		{Name: "refs/heads/main", Old: base, New: c},
	}
	mustUpdate(t, s, given...)
	publishTrace = nil
	var want []string
	for _, u := range given {
		want = append(want, u.Name)
	}
	if !slices.Equal(order, want) {
		t.Fatalf("refs renamed in the order %v, want the caller's %v", order, want)
	}
	wantRef(t, s, "refs/tags/readproof/runs/r1", c)
	wantRef(t, s, "refs/heads/main", c)
	if _, err := s.Ref("refs/heads/readproof/open/r1"); err == nil {
		t.Fatal("the deleted ref is still there")
	}
}

// TestUpdateDeletesPackedRefInGivenOrder: a ref that lives only in
// packed-refs (git gc packs every ref) is deleted where the caller lists it,
// not before the loose refs listed ahead of it: renaming packed-refs first
// let a process killed at once delete a run's open ref before the aborted
// or committed ref that replaces it existed (neither ref left).
func TestUpdateDeletesPackedRefInGivenOrder(t *testing.T) {
	s := NewTestStore(t)
	base := mkCommit(t, s, "base")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/readproof/open/r1", New: base})
	git(t, s.Path(), "pack-refs", "--all", "--prune")
	c := mkCommit(t, s, "abort", base)
	var order []string
	publishTrace = func(name string) { order = append(order, name) }
	defer func() { publishTrace = nil }()
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/readproof/aborted/r1/" + string(c), New: c},
		RefUpdate{Name: "refs/heads/readproof/open/r1", Old: base},
	)
	publishTrace = nil
	want := []string{"refs/heads/readproof/aborted/r1/" + string(c), "packed-refs", "refs/heads/readproof/open/r1"}
	if !slices.Equal(order, want) {
		t.Fatalf("moved in the order %v, want %v", order, want)
	}
	wantRef(t, s, "refs/heads/readproof/aborted/r1/"+string(c), c)
	if _, err := s.Ref("refs/heads/readproof/open/r1"); err == nil {
		t.Fatal("the deleted ref is still there")
	}
}

// TestDeletionHoldsPackedRefsLockUntilLooseFileGone: a ref with a loose
// file and a packed record is deleted from packed-refs and then its loose
// file removed; packed-refs.lock stays held until the file is gone, as
// git's own deletions hold it. Renaming the lock over packed-refs released
// it there, and a stock `git pack-refs --all --prune` run at that moment
// packed the loose file still there: the deleted ref came back.
func TestDeletionHoldsPackedRefsLockUntilLooseFileGone(t *testing.T) {
	s := NewTestStore(t)
	v0 := mkCommit(t, s, "v0")
	v := mkCommit(t, s, "v", v0)
	const victim = "refs/heads/readproof/open/r1"
	if err := WriteNewRefs(s, []Ref{{Name: victim, OID: v0}, {Name: "refs/heads/main", OID: v0}}); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, RefUpdate{Name: victim, Old: v0, New: v}) // loose, over the packed record
	var packOut []byte
	var packErr error
	publishTrace = func(name string) {
		if name == victim {
			// packed-refs no longer holds the ref; its loose file is
			// still there. Don't wait for packed-refs.lock.
			packOut, packErr = GitCommand(t, s.Path(), "-c", "core.packedRefsTimeout=0", "pack-refs", "--all", "--prune").CombinedOutput()
		}
	}
	defer func() { publishTrace = nil }()
	mustUpdate(t, s, RefUpdate{Name: victim, Old: v})
	publishTrace = nil
	t.Logf("git pack-refs during the deletion: %v %s", packErr, packOut)
	wantRef(t, s, victim, "")
	if out, err := GitCommand(t, s.Path(), "rev-parse", "--verify", "-q", victim).Output(); err == nil {
		t.Fatalf("the deleted %s is back at %s after a git pack-refs during its deletion", victim, out)
	}
	wantRef(t, s, "refs/heads/main", v0)
	assertNoLocks(t, s.Path())
}

// TestUpdateReplacesLeftPackedTemp: a version of packed-refs
// (packed-refs.1.lock) left by a killed writer does not stop the next
// rewrite of packed-refs, and none is left.
func TestUpdateReplacesLeftPackedTemp(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	v := mkCommit(t, s, "v")
	if err := WriteNewRefs(s, []Ref{{Name: "refs/heads/a", OID: v}, {Name: "refs/heads/b", OID: v}}); err != nil {
		t.Fatal(err)
	}
	temp := filepath.Join(s.Path(), "packed-refs.1.lock")
	if err := os.WriteFile(temp, []byte("half a packed-refs"), 0o600); err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/a", Old: v})
	wantRef(t, s, "refs/heads/a", "")
	wantRef(t, s, "refs/heads/b", v)
	if exists(temp) {
		t.Fatalf("%s left behind", temp)
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}
