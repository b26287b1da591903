package gitstore

import (
	"errors"
	"testing"
)

// TestPackedRefsDirFileSibling: the directory/file rule within one Update
// written into packed-refs holds when a sibling sorts between a new ref and
// its new child ('-' and '.' sort before '/'): refs/heads/a, refs/heads/a-x
// and refs/heads/a/b in one Update is a name conflict, as it is for git.
func TestPackedRefsDirFileSibling(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c := mkCommit(t, s, "c")
	for _, sibling := range []string{"refs/heads/a-x", "refs/heads/a.x"} {
		var ups []RefUpdate
		for i := 0; i < packedMin; i++ {
			ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
		}
		ups = append(ups, RefUpdate{Name: "refs/heads/a", New: c}, RefUpdate{Name: sibling, New: c}, RefUpdate{Name: "refs/heads/a/b", New: c})
		if err := s.Update(ups...); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("Update with refs/heads/a, %s and refs/heads/a/b: %v, want a name conflict", sibling, err)
		}
		for _, u := range ups {
			wantRef(t, s, u.Name, "")
		}
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}
