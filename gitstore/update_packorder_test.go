package gitstore

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// visibleRefs reads the values of names as a reader of the repository sees
// them at this moment: the loose file, else the packed-refs line ("" for a
// ref that is neither).
func visibleRefs(t *testing.T, gitDir string, names []string) map[string]OID {
	t.Helper()
	packed := map[string]OID{}
	if data, err := os.ReadFile(filepath.Join(gitDir, "packed-refs")); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(data))
		for sc.Scan() {
			line := sc.Text()
			if oid, name, ok := strings.Cut(line, " "); ok && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "^") {
				packed[name] = OID(oid)
			}
		}
	} else if !os.IsNotExist(err) {
		t.Fatal(err)
	}
	out := map[string]OID{}
	for _, n := range names {
		if b, err := os.ReadFile(filepath.Join(gitDir, filepath.FromSlash(n))); err == nil {
			out[n] = OID(strings.TrimSpace(string(b)))
		} else {
			out[n] = packed[n]
		}
	}
	return out
}

// checkGivenOrder returns a publishTrace that checks, before each move of
// an Update of ups, that what a reader sees of ups is a prefix of them
// done: no ref shows its new value while a ref listed before it still
// shows its old one (a process killed at that moment leaves that state).
// The moves it was told of go into order. (publishTrace is one variable:
// the tests that set it do not run in parallel.)
func checkGivenOrder(t *testing.T, gitDir string, ups []RefUpdate, order *[]string) func(string) {
	names := make([]string, len(ups))
	for i, u := range ups {
		names[i] = u.Name
	}
	return func(next string) {
		*order = append(*order, next)
		seen := visibleRefs(t, gitDir, names)
		firstOld := -1
		for i, u := range ups {
			switch v := seen[u.Name]; {
			case u.Old == u.New: // compared, not moved
				if v != u.New {
					t.Errorf("before moving %s: %s shows %q, want it unchanged at %q", next, u.Name, v, u.New)
				}
			case v == u.New:
				if firstOld >= 0 {
					t.Errorf("before moving %s: %s shows its new value %q while %s, listed before it, shows its old %q",
						next, u.Name, v, ups[firstOld].Name, ups[firstOld].Old)
				}
			case v == u.Old:
				if firstOld < 0 {
					firstOld = i
				}
			default:
				t.Errorf("before moving %s: %s shows %q, neither its old value %q nor its new %q", next, u.Name, v, u.Old, u.New)
			}
		}
	}
}

// TestUpdatePackedChangesInGivenOrder: in a transaction that writes refs
// into packed-refs, a change that lives in packed-refs (a ref written into
// it, or the deletion of a ref only it holds) becomes visible no earlier
// than the changes listed before it, loose or packed. After git gc every
// ref is packed; here a deletion only packed-refs holds and a group of
// refs written into it come after loose renames (a run's ref), and
// packed-refs is renamed into place once for each group, where its last
// change is listed. Until session 13 packed-refs was renamed once, where
// its first change was listed: a process killed after it left the open
// run deleted and the journal moved before the run's ref existed. A
// version file a killed writer left (packed-refs.1.lock) is replaced, and
// none is left.
func TestUpdatePackedChangesInGivenOrder(t *testing.T) {
	s := NewTestStore(t)
	base := mkCommit(t, s, "base")
	c := mkCommit(t, s, "next", base)
	aborted := "refs/heads/readproof/aborted/r0/" + string(base)
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/main", New: base},
		RefUpdate{Name: "refs/heads/readproof/open/r1", New: base},
		RefUpdate{Name: aborted, New: base},
	)
	git(t, s.Path(), "pack-refs", "--all", "--prune")
	if err := os.WriteFile(filepath.Join(s.Path(), "packed-refs.1.lock"), []byte("left by a killed writer\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ups := []RefUpdate{{Name: aborted, Old: base}} // only packed-refs holds it
	for i := 0; i < packedMin; i++ {
		ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
	}
	ups = append(ups,
		RefUpdate{Name: "refs/tags/readproof/runs/r1", New: c},     // loose
		RefUpdate{Name: "refs/heads/readproof/open/r1", Old: base}, // only packed-refs holds it
		RefUpdate{Name: "refs/tags/readproof/runs/r2", New: c},     // loose
	)
	for i := packedMin; i < 2*packedMin; i++ { // a group big enough to stay in packed-refs
		ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
	}
	ups = append(ups, RefUpdate{Name: "refs/heads/main", Old: base, New: c}) // only packed-refs holds it
	var order []string
	publishTrace = checkGivenOrder(t, s.Path(), ups, &order)
	defer func() { publishTrace = nil }()
	mustUpdate(t, s, ups...)
	publishTrace = nil
	want := []string{aborted, "packed-refs", "refs/tags/readproof/runs/r1", "packed-refs", "refs/heads/readproof/open/r1",
		"refs/tags/readproof/runs/r2", "packed-refs"}
	if !slices.Equal(order, want) {
		t.Fatalf("moved in the order\n%v\nwant\n%v", order, want)
	}
	for _, u := range ups {
		wantRef(t, s, u.Name, u.New)
	}
	if _, err := os.Lstat(filepath.Join(s.Path(), "refs", "heads", "main")); err == nil {
		t.Error("refs/heads/main got a loose file; it moved with the refs written into packed-refs")
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

// TestUpdatePackedOnce: the usual shapes of a run of many new documents
// write packed-refs once. With the journal loose, its changes are
// contiguous. After git gc only packed-refs holds the journal, listed after
// the run's ref: written into packed-refs it would cost a second version
// for one ref, so it is written loose (keepPackedTogether), after the run's
// ref, and every state a kill can leave is a prefix of the changes.
func TestUpdatePackedOnce(t *testing.T) {
	for _, gc := range []bool{false, true} {
		s := NewTestStore(t)
		base := mkCommit(t, s, "base")
		c := mkCommit(t, s, "next", base)
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: base})
		if gc {
			git(t, s.Path(), "pack-refs", "--all", "--prune")
		}
		var ups []RefUpdate
		for i := 0; i < packedMin+8; i++ {
			ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
		}
		ups = append(ups,
			RefUpdate{Name: "refs/tags/readproof/runs/r1", New: c},
			RefUpdate{Name: "refs/heads/readproof/open/r1"}, // must not exist
			RefUpdate{Name: "refs/heads/main", Old: base, New: c},
		)
		var order []string
		publishTrace = checkGivenOrder(t, s.Path(), ups, &order)
		mustUpdate(t, s, ups...)
		publishTrace = nil
		want := []string{"packed-refs", "refs/tags/readproof/runs/r1", "refs/heads/readproof/open/r1", "refs/heads/main"}
		if !slices.Equal(order, want) {
			t.Fatalf("gc %v: moved in the order\n%v\nwant\n%v", gc, order, want)
		}
		for _, u := range ups {
			wantRef(t, s, u.Name, u.New)
		}
		assertNoLocks(t, s.Path())
	}
}
