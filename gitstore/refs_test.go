package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/readproof/readproof/internal/hint"
	"github.com/readproof/readproof/internal/testsize"
)

func TestCheckRefNameAgreesWithGit(t *testing.T) {
	t.Parallel()
	names := []string{
		"refs/heads/main", "refs/heads/readproof/open/run-1", "refs/tags/readproof/runs/2025-01-01",
		"refs/heads/readproof/resources/docs+guide+a.md", "refs/heads/a-b_c", "refs/heads/é", "refs/heads/x@y",
		"refs/heads/a.b", "refs/heads/.a", "refs/heads/a..b", "refs/heads/a.lock", "refs/heads/a.lock/b",
		"refs/heads/a/", "refs/heads/a.", "refs/heads//a", "refs/heads/a b", "refs/heads/a~b", "refs/heads/a^b",
		"refs/heads/a:b", "refs/heads/a?b", "refs/heads/a*b", "refs/heads/a[b", `refs/heads/a\b`, "refs/heads/a@{b",
		"refs/heads/a\tb", "refs/heads/a\x7fb", "refs/heads/@", "refs/heads/a/.b", "refs/.heads/a", "refs/heads/..",
	}
	for _, name := range names {
		err := CheckRefName(name)
		cmd := GitCommand(t, "", "check-ref-format", name)
		gitOK := cmd.Run() == nil
		if (err == nil) != gitOK {
			t.Errorf("CheckRefName(%q) = %v, git check-ref-format ok = %v", name, err, gitOK)
		}
	}
	for _, name := range []string{"HEAD", "heads/main", "main", ""} {
		if CheckRefName(name) == nil {
			t.Errorf("CheckRefName(%q) = nil, want an error (not under refs/)", name)
		}
	}
}

func TestRefLooseAndPacked(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	names := []string{"refs/heads/main", "refs/heads/readproof/open/r1", "refs/heads/readproof/resources/docs+a.md",
		"refs/tags/readproof/runs/r1", "refs/heads/zz"}
	var ups []RefUpdate
	for _, n := range names {
		ups = append(ups, RefUpdate{Name: n, New: c1})
	}
	mustUpdate(t, s, ups...)
	check := func(stage string, want map[string]OID) {
		t.Helper()
		for n, id := range want {
			wantRef(t, s, n, id)
			if got := git(t, s.Path(), "rev-parse", "--verify", "-q", n); got != string(id) {
				t.Errorf("%s: git rev-parse %s = %s, want %s", stage, n, got, id)
			}
		}
		all, err := s.Refs("")
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, r := range all {
			b.WriteString(string(r.OID) + " " + r.Name + "\n")
		}
		if gitList := git(t, s.Path(), "for-each-ref", "--format=%(objectname) %(refname)") + "\n"; b.String() != gitList {
			t.Errorf("%s: Refs(\"\"):\n%s\ngit for-each-ref:\n%s", stage, b.String(), gitList)
		}
	}
	want := map[string]OID{}
	for _, n := range names {
		want[n] = c1
	}
	check("loose", want)
	wantRef(t, s, "HEAD", c1)

	git(t, s.Path(), "pack-refs", "--all")
	if exists(filepath.Join(s.Path(), "refs", "heads", "main")) {
		t.Fatal("pack-refs left loose refs")
	}
	check("packed", want)
	wantRef(t, s, "HEAD", c1)
	wantRef(t, s, "refs/heads/missing", "")
	wantRef(t, s, "refs/heads/readproof", "") // a directory of refs is not a ref

	// Mixed: a loose update wins over the packed value.
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/readproof/open/r1", Old: c1, New: c2})
	want["refs/heads/readproof/open/r1"] = c2
	check("mixed", want)

	cases := map[string][]string{
		"refs/heads/readproof/":  {"refs/heads/readproof/open/r1", "refs/heads/readproof/resources/docs+a.md"},
		"refs/heads/readproof/o": {"refs/heads/readproof/open/r1"},
		"refs/heads/rea":         {"refs/heads/readproof/open/r1", "refs/heads/readproof/resources/docs+a.md"},
		"refs/tags/":             {"refs/tags/readproof/runs/r1"},
		"refs/heads/z":           {"refs/heads/zz"},
		"refs/nothing/":          nil,
	}
	for prefix, wantNames := range cases {
		refs, err := s.Refs(prefix)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range refs {
			got = append(got, r.Name)
			if r.OID != want[r.Name] {
				t.Errorf("Refs(%s): %s = %s, want %s", prefix, r.Name, r.OID, want[r.Name])
			}
		}
		if strings.Join(got, ",") != strings.Join(wantNames, ",") {
			t.Errorf("Refs(%s) = %v, want %v", prefix, got, wantNames)
		}
	}
	if _, err := s.Refs("heads/"); err == nil {
		t.Error("Refs(heads/) accepted a prefix outside refs/")
	}

	// A symbolic ref is followed once, listed with its target's value, and
	// not updated through.
	git(t, s.Path(), "symbolic-ref", "refs/heads/alias", "refs/heads/zz")
	want["refs/heads/alias"] = c1
	check("symbolic", want)
	if err := s.Update(RefUpdate{Name: "refs/heads/alias", Old: c1, New: c2}); err == nil || !strings.Contains(err.Error(), "symbolic") {
		t.Errorf("Update through a symbolic ref: %v", err)
	}

	// An annotated tag: packed with a peeled line; Ref gives the tag object.
	git(t, s.Path(), "tag", "-a", "-m", "annotated", "ann", string(c2))
	git(t, s.Path(), "pack-refs", "--all")
	packed, _ := os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if !strings.Contains(string(packed), "\n^"+string(c2)) {
		t.Fatalf("no peeled line in packed-refs:\n%s", packed)
	}
	want["refs/tags/ann"] = OID(git(t, s.Path(), "rev-parse", "refs/tags/ann"))
	check("peeled", want)
	Fsck(t, s.Path())
}

func TestUpdateCAS(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	c3 := mkCommit(t, s, "three", c2)
	const ref = "refs/heads/readproof/open/run"

	// Create-only.
	mustUpdate(t, s, RefUpdate{Name: ref, New: c1})
	err := s.Update(RefUpdate{Name: ref, New: c2})
	var ce *ConflictError
	if !errors.Is(err, ErrConflict) || !errors.As(err, &ce) || ce.Ref != ref || ce.Expected != "" || ce.Actual != c1 {
		t.Fatalf("second create: %v", err)
	}
	wantRef(t, s, ref, c1)

	// Update.
	mustUpdate(t, s, RefUpdate{Name: ref, Old: c1, New: c2})
	wantRef(t, s, ref, c2)
	err = s.Update(RefUpdate{Name: ref, Old: c1, New: c3})
	if !errors.As(err, &ce) || ce.Expected != c1 || ce.Actual != c2 {
		t.Fatalf("stale update: %v", err)
	}
	wantRef(t, s, ref, c2)
	if data, _ := os.ReadFile(filepath.Join(s.Path(), filepath.FromSlash(ref))); string(data) != string(c2)+"\n" {
		t.Errorf("loose ref file = %q", data)
	}

	// A transaction with one conflict changes nothing.
	err = s.Update(
		RefUpdate{Name: "refs/heads/a-new", New: c1},
		RefUpdate{Name: ref, Old: c2, New: c3},
		RefUpdate{Name: "refs/heads/z-wrong", Old: c1, New: c3},
	)
	if !errors.As(err, &ce) || ce.Ref != "refs/heads/z-wrong" || ce.Actual != "" {
		t.Fatalf("conflicting transaction: %v", err)
	}
	wantRef(t, s, "refs/heads/a-new", "")
	wantRef(t, s, ref, c2)
	wantRef(t, s, "refs/heads/z-wrong", "")
	if exists(filepath.Join(s.Path(), "refs", "heads", "a-new")) {
		t.Error("a conflicting transaction left a ref file")
	}
	assertNoLocks(t, s.Path())

	// A transaction of several refs.
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/b", New: c1},
		RefUpdate{Name: ref, Old: c2, New: c3},
		RefUpdate{Name: "refs/tags/readproof/runs/r", New: c3},
	)
	wantRef(t, s, "refs/heads/b", c1)
	wantRef(t, s, ref, c3)
	wantRef(t, s, "refs/tags/readproof/runs/r", c3)

	// Delete: wrong Old conflicts, right Old deletes.
	if err := s.Update(RefUpdate{Name: "refs/heads/b", Old: c2}); !errors.Is(err, ErrConflict) {
		t.Fatalf("delete with wrong old: %v", err)
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/b", Old: c1})
	wantRef(t, s, "refs/heads/b", "")
	// Deleting an absent ref with Old "" is a no-op that succeeds.
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/never"})

	// Setting the current value again is allowed and changes nothing.
	mustUpdate(t, s, RefUpdate{Name: ref, Old: c3, New: c3})
	wantRef(t, s, ref, c3)

	// Refused input.
	bad := [][]RefUpdate{
		{{Name: "refs/heads/bad name", New: c1}},
		{{Name: "refs/heads/x.lock", New: c1}},
		{{Name: "HEAD", New: c1}},
		{{Name: "refs/heads/x", New: "nothex"}},
		{{Name: "refs/heads/x", Old: "nothex", New: c1}},
		{{Name: "refs/heads/x", New: c1}, {Name: "refs/heads/x", New: c2}},
	}
	for _, ups := range bad {
		if err := s.Update(ups...); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("Update(%v) = %v, want a validation error", ups, err)
		}
	}
	// A ref may not point at a missing object.
	missing := OID(strings.Repeat("12", 20))
	if err := s.Update(RefUpdate{Name: "refs/heads/dangling", New: missing}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Update to a missing object: %v", err)
	}
	wantRef(t, s, "refs/heads/dangling", "")

	// Agreement with stock git.
	if got := git(t, s.Path(), "rev-parse", ref); got != string(c3) {
		t.Errorf("git rev-parse = %s", got)
	}
	git(t, s.Path(), "update-ref", ref, string(c1), string(c3))
	wantRef(t, s, ref, c1)
	if err := s.Update(RefUpdate{Name: ref, Old: c3, New: c2}); !errors.Is(err, ErrConflict) {
		t.Errorf("Update after git moved the ref: %v", err)
	}
	mustUpdate(t, s, RefUpdate{Name: ref, Old: c1, New: c2})
	if err := GitCommand(t, s.Path(), "update-ref", ref, string(c3), string(c1)).Run(); err == nil {
		t.Error("git update-ref with a stale old value succeeded")
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

func TestDeletePackedRef(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	mustUpdate(t, s,
		RefUpdate{Name: "refs/heads/keep", New: c1},
		RefUpdate{Name: "refs/heads/gone", New: c1},
		RefUpdate{Name: "refs/heads/both", New: c1},
	)
	git(t, s.Path(), "tag", "-a", "-m", "t", "ann", string(c1))
	git(t, s.Path(), "pack-refs", "--all")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/both", Old: c1, New: c2}) // now loose and packed

	mustUpdate(t, s, RefUpdate{Name: "refs/heads/gone", Old: c1}, RefUpdate{Name: "refs/heads/both", Old: c2})
	wantRef(t, s, "refs/heads/gone", "")
	wantRef(t, s, "refs/heads/both", "")
	wantRef(t, s, "refs/heads/keep", c1)
	packed, _ := os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if strings.Contains(string(packed), "gone") || strings.Contains(string(packed), "both") {
		t.Errorf("packed-refs still names deleted refs:\n%s", packed)
	}
	if !strings.HasPrefix(string(packed), "# pack-refs with:") || !strings.Contains(string(packed), "\n^"+string(c1)) {
		t.Errorf("packed-refs lost its header or peeled line:\n%s", packed)
	}
	if got := git(t, s.Path(), "for-each-ref", "--format=%(refname)"); got != "refs/heads/keep\nrefs/tags/ann" {
		t.Errorf("git for-each-ref after delete:\n%s", got)
	}
	// Deleting a packed annotated tag drops its peeled line too.
	tag := OID(git(t, s.Path(), "rev-parse", "refs/tags/ann"))
	mustUpdate(t, s, RefUpdate{Name: "refs/tags/ann", Old: tag})
	packed, _ = os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if strings.Contains(string(packed), "^") || strings.Contains(string(packed), "ann") {
		t.Errorf("packed-refs after deleting the tag:\n%s", packed)
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

func TestDirFileConflicts(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c := mkCommit(t, s, "c")
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/x", New: c}, RefUpdate{Name: "refs/heads/d/e", New: c})
	for _, name := range []string{"refs/heads/x/y", "refs/heads/d"} {
		if err := s.Update(RefUpdate{Name: name, New: c}); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("create %s: %v, want a name conflict", name, err)
		}
	}
	git(t, s.Path(), "pack-refs", "--all")
	for _, name := range []string{"refs/heads/x/y", "refs/heads/d"} {
		if err := s.Update(RefUpdate{Name: name, New: c}); err == nil || errors.Is(err, ErrConflict) {
			t.Errorf("create %s over packed refs: %v, want a name conflict", name, err)
		}
	}
	// Once refs/heads/d/e is deleted, its empty directory does not block refs/heads/d.
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/d/e", Old: c})
	os.MkdirAll(filepath.Join(s.Path(), "refs", "heads", "d"), 0o777)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/d", New: c})
	wantRef(t, s, "refs/heads/d", c)
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

// TestStaleLockIsBroken: a lock older than StaleLockAge is broken at
// once, not waited on. A timeout test: the update goes through (a lock
// waited on until the timeout fails with ErrLocked), and well before a
// lock timeout of a minute, a bound no load reaches.
func TestStaleLockIsBroken(t *testing.T) {
	t.Parallel()
	const timeout = time.Minute
	s, err := InitWithOptions(filepath.Join(t.TempDir(), "store"), Options{LockTimeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c := mkCommit(t, s, "c")
	lock := filepath.Join(s.Path(), "refs", "heads", "main.lock")
	os.WriteFile(lock, nil, 0o666)
	old := time.Now().Add(-DefaultStaleLockAge - time.Second)
	os.Chtimes(lock, old, old)
	start := time.Now()
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c})
	if d := time.Since(start); d > timeout/2 {
		t.Errorf("breaking a stale lock took %s, want it broken at once, not after waiting (lock timeout %s)", d, timeout)
	}
	wantRef(t, s, "refs/heads/main", c)
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
}

func TestHeldLockTimesOut(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "store")
	const timeout = 150 * time.Millisecond
	s, err := InitWithOptions(dir, Options{LockTimeout: timeout, StaleLockAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c1})
	lock := filepath.Join(s.Path(), "refs", "heads", "main.lock")
	os.WriteFile(lock, nil, 0o666) // someone else holds it
	start := time.Now()
	err = s.Update(RefUpdate{Name: "refs/heads/main", Old: c1, New: c2})
	if !errors.Is(err, ErrLocked) {
		t.Fatalf("Update with the lock held: %v, want ErrLocked", err)
	}
	// Session 17: the error said when to remove the file, with no hint
	// line; the hint now says to run again, or how to remove it.
	if h := hint.Of(err); !strings.Contains(h, "rm "+lock) || !strings.Contains(h, "run the command again") {
		t.Errorf("Update with the lock held: %v: hint %q, want one to run again or rm the lock", err, h)
	}
	// A timeout test: it gave up because of the timeout (ErrLocked, and
	// not before it), and did not wait on: the upper bound is 200 times
	// the timeout, for loaded machines.
	if d := time.Since(start); d < timeout || d > 30*time.Second {
		t.Errorf("gave up after %s, want after the timeout of %s", d, timeout)
	}
	if !exists(lock) {
		t.Error("Update removed a lock it did not own")
	}
	wantRef(t, s, "refs/heads/main", c1)

	// Released while we wait: the update goes through. It waits through
	// a second handle on the store, whose timeout no load outlasts (with
	// the short one, the release had to come within it).
	mustSync(t, s)
	patient, err := OpenWithOptions(dir, Options{LockTimeout: time.Minute, StaleLockAge: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	go func() {
		time.Sleep(100 * time.Millisecond)
		os.Remove(lock)
	}()
	mustUpdate(t, patient, RefUpdate{Name: "refs/heads/main", Old: c1, New: c2})
	if d := time.Since(start); d < 100*time.Millisecond {
		t.Errorf("the update went through after %s, before the lock was released", d)
	}
	patient.Close()
	wantRef(t, s, "refs/heads/main", c2)

	// The packed-refs lock is honoured too when deleting.
	os.WriteFile(filepath.Join(s.Path(), "packed-refs.lock"), nil, 0o666)
	if err := s.Update(RefUpdate{Name: "refs/heads/main", Old: c2}); !errors.Is(err, ErrLocked) {
		t.Errorf("delete with packed-refs.lock held: %v", err)
	}
	wantRef(t, s, "refs/heads/main", c2)
	if exists(lock) {
		t.Error("failed delete left its ref lock")
	}
}

// TestUpdateGoroutines races CAS appends from goroutines sharing one Store.
func TestUpdateGoroutines(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	root := mkCommit(t, s, "root")
	const ref = "refs/heads/chain"
	mustUpdate(t, s, RefUpdate{Name: ref, New: root})
	var wg sync.WaitGroup
	const workers, each = 4, 25
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; {
				tip, err := s.Ref(ref)
				if err != nil {
					t.Error(err)
					return
				}
				c, err := s.PutCommit(Commit{Tree: mustEmptyTree(t, s), Parents: []OID{tip}, Author: testSig(), Committer: testSig(),
					Message: "w" + string(rune('a'+w)) + " " + strings.Repeat("i", i) + "\n"})
				if err != nil {
					t.Error(err)
					return
				}
				err = s.Update(RefUpdate{Name: ref, Old: tip, New: c})
				if errors.Is(err, ErrConflict) {
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				i++
			}
		}()
	}
	wg.Wait()
	if n := chainLength(t, s, ref); n != workers*each+1 {
		t.Errorf("chain length %d, want %d", n, workers*each+1)
	}
}

func mustEmptyTree(t testing.TB, s Store) OID {
	id, err := s.PutTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// chainLength walks first parents from ref and counts the commits.
func chainLength(t testing.TB, s Store, ref string) int {
	t.Helper()
	id, err := s.Ref(ref)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for id != "" {
		c, err := s.Commit(id)
		if err != nil {
			t.Fatalf("commit %d of the chain: %v", n, err)
		}
		n++
		id = ""
		if len(c.Parents) > 0 {
			id = c.Parents[0]
		}
	}
	return n
}

// TestManyPackedRefs compares lookups and listings with git on many packed
// refs (300 by default, 1500 under READPROOF_LONG_TESTS=1), with some of
// them updated loose.
func TestManyPackedRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	c1 := mkCommit(t, s, "one")
	c2 := mkCommit(t, s, "two", c1)
	n := testsize.Pick(t, 300, 1500) // a multiple of 100, prime to 7
	var ups []RefUpdate
	for i := 0; i < n; i++ {
		ups = append(ups, RefUpdate{Name: fmt.Sprintf("refs/tags/readproof/runs/r%04d", i*7%n), New: c1})
	}
	mustUpdate(t, s, ups...)
	git(t, s.Path(), "pack-refs", "--all")
	var moved []RefUpdate
	for i := 0; i < n; i += 97 {
		moved = append(moved, RefUpdate{Name: fmt.Sprintf("refs/tags/readproof/runs/r%04d", i), Old: c1, New: c2})
	}
	mustUpdate(t, s, moved...)
	all, err := s.Refs("refs/tags/readproof/")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmtRefs(all), git(t, s.Path(), "for-each-ref", "--format=%(objectname) %(refname)")+"\n"; got != want {
		t.Fatalf("Refs differs from git for-each-ref (%d refs)", len(all))
	}
	for i := 0; i < n; i += 13 {
		name := fmt.Sprintf("refs/tags/readproof/runs/r%04d", i)
		want := c1
		if i%97 == 0 {
			want = c2
		}
		wantRef(t, s, name, want)
		wantRef(t, s, name+"x", "")
	}
	wantRef(t, s, "refs/tags/a", "")
	wantRef(t, s, "refs/tags/zzzz", "")
	// the last hundred: r1400..r1499 at full size
	last := fmt.Sprintf("refs/tags/readproof/runs/r%02d", n/100-1)
	refs, err := s.Refs(last)
	if err != nil || len(refs) != 100 {
		t.Errorf("Refs(%s) = %d refs, %v", last, len(refs), err)
	}
}
