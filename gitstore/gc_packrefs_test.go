package gitstore

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"github.com/readproof/readproof/internal/testsize"
)

// TestGCKeepsRefDeletedAndMadeAgain: a ref deleted and made again at the
// same value between gc's packing of the refs and its removal of the
// loose files it packed must survive the gc.
//
// Stock `git pack-refs --all --prune` (which git gc runs) writes
// packed-refs, releases packed-refs.lock, and only then removes each loose
// ref it packed whose file still holds the value it packed. A writer that
// deletes the ref in between (which takes packed-refs.lock: the ref is
// packed now) and makes it again as a loose file with the same value
// leaves exactly that file, and the ref is lost. The window is made wide
// here without any wrapper: other loose refs whose lock a writer holds
// (busy) sort after the ref, and git removes the packed loose files in
// reverse name order, waiting core.filesRefLockTimeout (100 ms) for each
// busy lock before it gives that ref up. The writer waits until
// packed-refs holds the ref, then deletes it and makes it again.
func TestGCKeepsRefDeletedAndMadeAgain(t *testing.T) {
	t.Parallel()
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	v := mkCommit(t, s, "the value the ref gets back")
	const victim = "refs/heads/readproof/open/r1"
	busy := []string{"refs/heads/zz/busy1", "refs/heads/zz/busy2"}
	for _, name := range append([]string{victim}, busy...) {
		mustUpdate(t, s, RefUpdate{Name: name, New: v})
	}
	// Another writer holds the busy refs' locks (as between its compare
	// and its rename) for the whole gc.
	for _, name := range busy {
		lock := filepath.Join(s.Path(), filepath.FromSlash(name)) + ".lock"
		if err := os.WriteFile(lock, []byte(string(v)+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Remove(lock) })
	}
	packed := filepath.Join(s.Path(), "packed-refs")
	line := []byte(string(v) + " " + victim + "\n")
	gcDone := make(chan struct{})
	var saw bool
	var werr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for !saw {
			if b, err := os.ReadFile(packed); err == nil && bytes.Contains(b, line) {
				saw = true
				break
			}
			select {
			case <-gcDone:
				return
			default:
			}
			time.Sleep(200 * time.Microsecond)
		}
		if werr = s.Update(RefUpdate{Name: victim, Old: v}); werr != nil {
			return
		}
		werr = s.Update(RefUpdate{Name: victim, New: v})
	}()
	_, err := GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour})
	close(gcDone)
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	if !saw {
		t.Fatal("packed-refs never held the ref while gc ran: the writer had nothing to race")
	}
	if werr != nil {
		t.Fatalf("writer: %v", werr)
	}
	// The writer's last operation made the ref: it must be there.
	if out, err := GitCommand(t, s.Path(), "rev-parse", "--verify", "-q", victim).Output(); err != nil || strings.TrimSpace(string(out)) != string(v) {
		t.Fatalf("%s was made again at %s after gc packed it, and is gone after the gc (git rev-parse: %q, %v)", victim, v, out, err)
	}
	wantRef(t, s, victim, v)
	for _, name := range busy {
		wantRef(t, s, name, v)
		os.Remove(filepath.Join(s.Path(), filepath.FromSlash(name)) + ".lock")
	}
	Fsck(t, s.Path())
}

// TestGCWhileRefsAreDeletedAndMadeAgain (READPROOF_LONG_TESTS=1) is the
// soak: writers delete refs and make them again at the same value, each
// checking by compare-and-swap that its ref is there before it deletes
// it, while GC runs in a loop.
func TestGCWhileRefsAreDeletedAndMadeAgain(t *testing.T) {
	if !testsize.Long() {
		t.Skip("races git gc for seconds; runs with " + testsize.Env + "=1")
	}
	if _, err := lookGit(); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	v := mkCommit(t, s, "the value the refs get back")
	const writers = 4
	stop := make(chan struct{})
	errs := make(chan error, writers)
	var cycles [writers]int
	for w := 0; w < writers; w++ {
		go func() {
			errs <- func() error {
				name := "refs/heads/w" + strconv.Itoa(w) + "/ref"
				for ; ; cycles[w]++ {
					if err := s.Update(RefUpdate{Name: name, New: v}); err != nil {
						return err
					}
					select {
					case <-stop:
						return nil
					default:
					}
					if err := s.Update(RefUpdate{Name: name, Old: v}); err != nil {
						var ce *ConflictError
						if errors.As(err, &ce) {
							return errors.New(name + " was made and is gone: " + err.Error())
						}
						return err
					}
				}
			}()
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	gcs := 0
	var gcErr error
	for ; time.Now().Before(deadline) && gcErr == nil; gcs++ {
		_, gcErr = GC(context.Background(), s.Path(), GCOptions{Grace: time.Hour})
		select {
		case err := <-errs:
			gcErr = err
			errs <- nil
		default:
		}
	}
	close(stop)
	var failed []string
	for w := 0; w < writers; w++ {
		if err := <-errs; err != nil {
			failed = append(failed, err.Error())
		}
	}
	if gcErr != nil {
		failed = append(failed, gcErr.Error())
	}
	t.Logf("%d gcs; writer cycles %v", gcs, cycles)
	if len(failed) > 0 {
		t.Fatalf("after %d gcs: %s", gcs, strings.Join(failed, "; "))
	}
	for w := 0; w < writers; w++ {
		wantRef(t, s, "refs/heads/w"+strconv.Itoa(w)+"/ref", v)
	}
	Fsck(t, s.Path())
}

// TestPackRefsAsGitDoes: packRefs leaves packed-refs byte for byte as
// stock `git pack-refs --all --prune` writes it from the same store
// (header, order, peeled lines of annotated tags, a tag of a tag), the same
// loose files and directories behind (symbolic refs, a symbolic link, a
// broken ref file, a ref naming a missing object and refs/bisect/ stay
// loose; emptied directories below refs/heads/ go), and every ref reads
// the same through git for-each-ref before and after.
func TestPackRefsAsGitDoes(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b", a)
	// Packed records without peeled state, as WriteNewRefs writes them.
	if err := WriteNewRefs(s, []Ref{{Name: "refs/heads/main", OID: a}, {Name: "refs/heads/x/old", OID: a}, {Name: "refs/tags/packed-light", OID: a}}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ {
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/readproof/open/r" + strconv.Itoa(i), New: b})
	}
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/deep/er/still/ref", New: a})
	mustUpdate(t, s, RefUpdate{Name: "refs/heads/x/old", Old: a, New: b}) // loose over packed
	git(t, s.Path(), "tag", "-a", "-m", "annotated", "v1", string(a))
	git(t, s.Path(), "tag", "-a", "-m", "tag of a tag", "v1-again", "v1")
	git(t, s.Path(), "tag", "light", string(b))
	git(t, s.Path(), "update-ref", "refs/bisect/bad", string(b))
	git(t, s.Path(), "symbolic-ref", "refs/heads/sym", "refs/heads/main")
	write := func(name, content string) {
		p := filepath.Join(s.Path(), filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	refs := func(dir string) string {
		return git(t, dir, "for-each-ref", "--format=%(objectname) %(refname) %(*objectname) %(symref)")
	}
	before := refs(s.Path())
	// Left loose by git, and kept out of the comparison of the refs.
	write("refs/heads/missing", strings.Repeat("7", 40)+"\n")
	write("refs/heads/broken", "not an object id\n")
	if err := os.Symlink("main", filepath.Join(s.Path(), "refs", "heads", "link")); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(t.TempDir(), "copy")
	if err := os.CopyFS(theirs, os.DirFS(s.Path())); err != nil {
		t.Fatal(err)
	}
	git(t, theirs, "pack-refs", "--all", "--prune")
	st, err := s.(*repo).packRefs()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packed != 10 || st.Removed != 10 || st.Busy != 0 {
		t.Errorf("packRefs: %+v, want 10 loose refs packed and removed", st)
	}
	ours, err := os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join(theirs, "packed-refs"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(ours, want) {
		t.Errorf("packed-refs:\n%s\ngit pack-refs wrote:\n%s", ours, want)
	}
	if got, want := listTree(t, filepath.Join(s.Path(), "refs")), listTree(t, filepath.Join(theirs, "refs")); got != want {
		t.Errorf("left under refs/:\n%s\ngit pack-refs left:\n%s", got, want)
	}
	// Packed again: nothing loose to pack, every record peeled: the file
	// is not rewritten.
	fi, _ := os.Stat(filepath.Join(s.Path(), "packed-refs"))
	if st, err := s.(*repo).packRefs(); err != nil || st.Packed != 0 {
		t.Fatalf("packRefs again: %+v, %v", st, err)
	}
	if fi2, _ := os.Stat(filepath.Join(s.Path(), "packed-refs")); !os.SameFile(fi, fi2) {
		t.Error("packRefs with nothing to do rewrote packed-refs")
	}
	for _, name := range []string{"refs/heads/missing", "refs/heads/broken", "refs/heads/link"} {
		os.Remove(filepath.Join(s.Path(), filepath.FromSlash(name)))
	}
	if after := refs(s.Path()); after != before {
		t.Errorf("refs after packing:\n%s\nbefore:\n%s", after, before)
	}
	assertNoLocks(t, s.Path())
	Fsck(t, s.Path())
	// go-git's reader and ours agree with git.
	wantRef(t, s, "refs/heads/x/old", b)
	wantRef(t, s, "refs/tags/v1", OID(strings.TrimSpace(git(t, s.Path(), "rev-parse", "refs/tags/v1"))))
	var fromGit []string
	for _, l := range strings.Split(strings.TrimSpace(git(t, s.Path(), "for-each-ref", "--format=%(objectname) %(refname)")), "\n") {
		if !strings.HasSuffix(l, " refs/heads/sym") {
			fromGit = append(fromGit, l)
		}
	}
	iter, err := filesystem.NewStorage(osfs.New(s.Path()), cache.NewObjectLRUDefault()).IterReferences()
	if err != nil {
		t.Fatal(err)
	}
	var fromGoGit []string
	iter.ForEach(func(r *plumbing.Reference) error {
		if r.Type() == plumbing.HashReference && strings.HasPrefix(r.Name().String(), "refs/") {
			fromGoGit = append(fromGoGit, r.Hash().String()+" "+r.Name().String())
		}
		return nil
	})
	sort.Slice(fromGoGit, func(i, j int) bool { return fromGoGit[i][41:] < fromGoGit[j][41:] })
	if strings.Join(fromGoGit, "\n") != strings.Join(fromGit, "\n") {
		t.Errorf("go-git reads the refs as\n%s\ngit as\n%s", strings.Join(fromGoGit, "\n"), strings.Join(fromGit, "\n"))
	}
}

// listTree lists the files, symbolic links and directories under dir.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		b.WriteString(rel + " " + d.Type().String() + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestPackRefsLeavesLockedRefs: a ref whose lock is held is neither packed
// nor removed. Such a ref may be in the middle of a deletion that has
// already renamed packed-refs without it (releasing packed-refs.lock) and
// has not yet removed its loose file: packing that file would bring the
// deleted ref back once the writer removes it.
func TestPackRefsLeavesLockedRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	v := mkCommit(t, s, "v")
	const victim = "refs/heads/z/r1"
	mustUpdate(t, s, RefUpdate{Name: victim, New: v}, RefUpdate{Name: "refs/heads/z/other", New: v})
	path := filepath.Join(s.Path(), filepath.FromSlash(victim))
	// The deleting writer holds the ref's lock, and packed-refs no longer
	// holds the ref (there is none); the loose file is still there.
	if err := os.WriteFile(path+".lock", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	st, err := s.(*repo).packRefs()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packed != 1 {
		t.Errorf("packRefs: %+v, want the unlocked ref packed", st)
	}
	// The writer completes its deletion.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	os.Remove(path + ".lock")
	if b, _ := os.ReadFile(filepath.Join(s.Path(), "packed-refs")); bytes.Contains(b, []byte(victim)) {
		t.Fatalf("packed-refs holds %s, whose lock was held:\n%s", victim, b)
	}
	wantRef(t, s, victim, "")
	wantRef(t, s, "refs/heads/z/other", v)
}
