package gitstore

import (
	"errors"
	"fmt"
	"testing"
)

// TestHasPackedFirst: Has answers the same whether the pack indexes are
// consulted before the loose files (reader already listing the packs) or
// after (not yet): packed, loose, and missing objects; and an Update of
// many refs to packed objects, or naming a missing one, is applied or
// refused as before.
func TestHasPackedFirst(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	var packed []OID
	for i := 0; i < packThreshold+8; i++ {
		packed = append(packed, putBlob(t, s, fmt.Sprintf("packed %d", i)))
	}
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	loose := putBlob(t, s, "loose")
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	missing := OID("0123456789012345678901234567890123456789")
	r := s.(*repo)
	for _, scanned := range []bool{false, true} {
		r.mu.Lock()
		r.st.Reindex()
		if scanned {
			r.st.scan()
		}
		r.mu.Unlock()
		for _, c := range []struct {
			id   OID
			want bool
		}{{packed[0], true}, {packed[len(packed)-1], true}, {loose, true}, {missing, false}} {
			got, err := s.Has(c.id)
			if err != nil || got != c.want {
				t.Errorf("scanned %v: Has(%s) = %v, %v; want %v", scanned, c.id, got, err, c.want)
			}
		}
	}
	var ups []RefUpdate
	for i := 0; i < 10; i++ {
		c := mkCommit(t, s, fmt.Sprintf("commit %d", i))
		ups = append(ups, RefUpdate{Name: fmt.Sprintf("refs/heads/many/%d", i), New: c})
	}
	mustUpdate(t, s, ups...)
	bad := append(ups[:0:0], RefUpdate{Name: "refs/heads/many/bad", New: missing})
	for i := 0; i < 9; i++ {
		bad = append(bad, RefUpdate{Name: fmt.Sprintf("refs/heads/many/x%d", i), New: ups[i].New})
	}
	if err := s.Update(bad...); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update naming a missing object: %v, want ErrNotFound", err)
	}
}
