package gitstore

import (
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
