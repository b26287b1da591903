package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func resourceRefName(i int) string {
	return fmt.Sprintf("refs/heads/readproof/resources/bench/docs+d%05d", i)
}

// TestManyRefsGoIntoPackedRefs: an Update that sets packedMin refs or more
// writes the ones without a loose file into packed-refs (no lock file or
// loose file each) and the ones with a loose file loose; the values are the
// same as loose writes give, git agrees, an annotated tag's peeled line
// survives, and a conflict leaves packed-refs as it was.
func TestManyRefsGoIntoPackedRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	const n = packedMin + 8
	// one ref already loose, an annotated tag and a ref already packed
	mustUpdate(t, s, RefUpdate{Name: resourceRefName(3), New: c1}, RefUpdate{Name: "refs/heads/keep", New: c1})
	git(t, s.Path(), "tag", "-a", "-m", "t", "ann", string(c1))
	git(t, s.Path(), "pack-refs", "--all")
	mustUpdate(t, s, RefUpdate{Name: resourceRefName(3), Old: c1, New: c2}) // loose again
	var ups []RefUpdate
	for i := 0; i < n; i++ {
		u := RefUpdate{Name: resourceRefName(i), New: c1}
		if i == 3 {
			u.Old = c2
		}
		ups = append(ups, u)
	}
	ups = append(ups, RefUpdate{Name: "refs/heads/readproof/open/r"}) // must not exist: a delete
	mustUpdate(t, s, ups...)
	for i := 0; i < n; i++ {
		wantRef(t, s, resourceRefName(i), c1)
		_, err := os.Lstat(filepath.Join(s.Path(), filepath.FromSlash(resourceRefName(i))))
		if loose := err == nil; loose != (i == 3) {
			t.Errorf("%s: loose file %v, want %v", resourceRefName(i), loose, i == 3)
		}
	}
	packed, err := os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	head, _, _ := strings.Cut(string(packed), "\n")
	if !strings.Contains(head, " sorted") || strings.Contains(head, "fully-peeled") {
		t.Errorf("packed-refs header %q: want sorted, not fully-peeled", head)
	}
	if !strings.Contains(string(packed), "refs/tags/ann\n^"+string(c1)+"\n") {
		t.Errorf("the annotated tag lost its peeled line:\n%s", packed)
	}
	all, err := s.Refs("")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmtRefs(all), git(t, s.Path(), "for-each-ref", "--format=%(objectname) %(refname)")+"\n"; got != want {
		t.Errorf("Refs:\n%s\ngit for-each-ref:\n%s", got, want)
	}
	if got := git(t, s.Path(), "show-ref", "-d", "refs/tags/ann"); !strings.Contains(got, string(c1)+" refs/tags/ann^{}") {
		t.Errorf("git show-ref -d: %s", got)
	}
	assertNoLocks(t, s.Path())

	// A conflict on one ref changes nothing.
	before := packed
	ups = ups[:0]
	for i := 0; i < n; i++ {
		old := c1
		if i == n-1 {
			old = c2 // stale
		}
		ups = append(ups, RefUpdate{Name: resourceRefName(i), Old: old, New: c2})
	}
	var ce *ConflictError
	if err := s.Update(ups...); !errors.As(err, &ce) || ce.Ref != resourceRefName(n-1) {
		t.Fatalf("stale packed update: %v, want a conflict on %s", err, resourceRefName(n-1))
	}
	if after, _ := os.ReadFile(filepath.Join(s.Path(), "packed-refs")); string(after) != string(before) {
		t.Error("a conflicting Update rewrote packed-refs")
	}
	for i := 0; i < n; i++ {
		wantRef(t, s, resourceRefName(i), c1)
	}

	// Updates of packed refs, new refs and a delete of a packed ref in one.
	ups = ups[:0]
	for i := 0; i < n+5; i++ {
		u := RefUpdate{Name: resourceRefName(i), New: c2}
		if i < n {
			u.Old = c1
		}
		ups = append(ups, u)
	}
	ups = append(ups, RefUpdate{Name: "refs/heads/keep", Old: c1})
	mustUpdate(t, s, ups...)
	for i := 0; i < n+5; i++ {
		wantRef(t, s, resourceRefName(i), c2)
	}
	wantRef(t, s, "refs/heads/keep", "")
	wantRef(t, s, "refs/tags/ann", OID(git(t, s.Path(), "rev-parse", "refs/tags/ann")))
	all, _ = s.Refs("")
	if got, want := fmtRefs(all), git(t, s.Path(), "for-each-ref", "--format=%(objectname) %(refname)")+"\n"; got != want {
		t.Errorf("Refs:\n%s\ngit for-each-ref:\n%s", got, want)
	}
	// git reads and rewrites it
	git(t, s.Path(), "pack-refs", "--all")
	for i := 0; i < n+5; i++ {
		wantRef(t, s, resourceRefName(i), c2)
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

// moreResources is n updates creating resource refs from the from'th on.
func moreResources(from, n int, c OID) []RefUpdate {
	var ups []RefUpdate
	for i := from; i < from+n; i++ {
		ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
	}
	return ups
}

// TestPackedRefsDirFile: git's directory/file rule holds for refs written
// into packed-refs, against loose refs and within the Update.
func TestPackedRefsDirFile(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c := mkCommit(t, s, "c")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/x", New: c})
	many := func(extra ...RefUpdate) []RefUpdate {
		var ups []RefUpdate
		for i := 0; i < packedMin; i++ {
			ups = append(ups, RefUpdate{Name: resourceRefName(i), New: c})
		}
		return append(ups, extra...)
	}
	cases := [][]RefUpdate{
		many(RefUpdate{Name: "refs/heads/x/y", New: c}),                                          // below a loose ref
		many(RefUpdate{Name: "refs/heads/a", New: c}, RefUpdate{Name: "refs/heads/a/b", New: c}), // within the Update
		many(RefUpdate{Name: "refs/heads/readproof/resources", New: c}),                          // above the new ones
		// a parent written loose (a group of one after a loose ref,
		// keepPackedTogether) and its child written into packed-refs
		many(append([]RefUpdate{{Name: "refs/tags/t1", New: c}, {Name: "refs/heads/p", New: c}, {Name: "refs/tags/t2", New: c}},
			append(moreResources(100, packedMin, c), RefUpdate{Name: "refs/heads/p/q", New: c})...)...),
	}
	for _, ups := range cases {
		if err := s.Update(ups...); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("Update with %s: %v, want a name conflict", ups[len(ups)-1].Name, err)
		}
		for _, u := range ups {
			if u.Name != "refs/heads/x" {
				wantRef(t, s, u.Name, "")
			}
		}
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

// TestPackedAndLooseWritersLoseNothing races Updates of many refs (written
// into packed-refs) against single-ref Updates (written loose) of the same
// refs, from two Stores on one repository: every Update that succeeded
// added one commit to its ref's chain, so no chain may come out shorter
// than its count of successes.
func TestPackedAndLooseWritersLoseNothing(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	other, err := Open(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	root := mkCommit(t, s, "root")
	const n = packedMin + 4
	var ups []RefUpdate
	for i := 0; i < n; i++ {
		ups = append(ups, RefUpdate{Name: resourceRefName(i), New: root})
	}
	mustUpdate(t, s, ups...)
	var mu sync.Mutex
	wins := make([]int, n)
	// extend moves refs[i] for each i in idx one commit on from its
	// current value, retrying conflicts, and counts the win.
	extend := func(st Store, tag string, idx []int) error {
		for {
			var ups []RefUpdate
			for _, i := range idx {
				tip, err := st.Ref(resourceRefName(i))
				if err != nil {
					return err
				}
				c, err := st.PutCommit(Commit{Tree: mustEmptyTree(t, st), Parents: []OID{tip}, Author: testSig(), Committer: testSig(), Message: tag + "\n"})
				if err != nil {
					return err
				}
				ups = append(ups, RefUpdate{Name: resourceRefName(i), Old: tip, New: c})
			}
			err := st.Update(ups...)
			if errors.Is(err, ErrConflict) {
				continue
			}
			if err != nil {
				return err
			}
			mu.Lock()
			for _, i := range idx {
				wins[i]++
			}
			mu.Unlock()
			return nil
		}
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w, st := range []Store{s, other} {
		wg.Add(2)
		go func() { // many refs at once: packed-refs
			defer wg.Done()
			for k := 0; k < 6; k++ {
				if err := extend(st, fmt.Sprintf("all %d %d", w, k), all); err != nil {
					errs <- err
					return
				}
			}
		}()
		go func() { // one ref at a time: loose
			defer wg.Done()
			for k := 0; k < 3*n; k++ {
				if err := extend(st, fmt.Sprintf("one %d %d", w, k), []int{(k*7 + w) % n}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if got := chainLength(t, s, resourceRefName(i)); got != wins[i]+1 {
			t.Errorf("%s: chain of %d commits, want %d (1 + %d Updates that succeeded)", resourceRefName(i), got, wins[i]+1, wins[i])
		}
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

// TestMergedPackedRefs: the rewrite of packed-refs by a many-ref Update
// keeps every record it does not set (peeled lines with them), sorts a file
// that was not sorted, adds a newline to a last record without one, and
// drops "fully-peeled" but keeps the other traits.
func TestMergedPackedRefs(t *testing.T) {
	t.Parallel()
	a, b, c := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)
	for _, tc := range []struct{ in, want string }{
		{ // no file yet
			"",
			"# pack-refs with: peeled sorted \n" + b + " refs/heads/m\n" + c + " refs/heads/x\n",
		},
		{ // unsorted, no header, a peeled tag (a file with no final newline is refused since session 22)
			b + " refs/tags/t\n^" + a + "\n" + a + " refs/heads/z\n" + a + " refs/heads/a\n",
			"# pack-refs with: sorted \n" + a + " refs/heads/a\n" + b + " refs/heads/m\n" + c + " refs/heads/x\n" + b + " refs/tags/t\n^" + a + "\n",
		},
		{ // sorted with traits; x replaced, d dropped
			"# pack-refs with: peeled fully-peeled sorted \n" + a + " refs/heads/d\n" + a + " refs/heads/x\n" + b + " refs/tags/t\n^" + a + "\n",
			"# pack-refs with: peeled sorted \n" + b + " refs/heads/m\n" + c + " refs/heads/x\n" + b + " refs/tags/t\n^" + a + "\n",
		},
	} {
		var p *packedRefs
		if tc.in != "" {
			var err error
			if p, err = parsePackedRefs([]byte(tc.in)); err != nil {
				t.Fatal(err)
			}
		}
		sets := []*refTx{
			{RefUpdate: &RefUpdate{Name: "refs/heads/m", New: OID(b)}},
			{RefUpdate: &RefUpdate{Name: "refs/heads/x", New: OID(c)}},
		}
		got, err := p.merged(sets, map[string]bool{"refs/heads/d": true, "refs/heads/z": true})
		if err != nil || string(got) != tc.want {
			t.Errorf("merged(%q) =\n%s (%v)\nwant\n%s", tc.in, got, err, tc.want)
		}
		if _, err := parsePackedRefs(got); err != nil {
			t.Errorf("merged output does not parse: %v", err)
		}
	}
}
