package gitstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteNewRefs: every ref lands in one sorted packed-refs file, with no
// loose ref file and no lock left; git and Ref/Refs read them; a second
// write, or a write into a repository with a loose ref, is refused.
func TestWriteNewRefs(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	a := mkCommit(t, s, "a")
	b := mkCommit(t, s, "b", a)
	var refs []Ref
	for i := 30; i >= 0; i-- { // unsorted on purpose
		refs = append(refs, Ref{Name: fmt.Sprintf("refs/tags/readproof/runs/r%02d", i), OID: a})
	}
	refs = append(refs, Ref{Name: "refs/heads/main", OID: b}, Ref{Name: "refs/readproof-remotes/origin/main", OID: b})
	if err := WriteNewRefs(s, refs); err != nil {
		t.Fatal(err)
	}
	if loose, err := anyLooseRef(filepath.Join(s.Path(), "refs")); err != nil || loose != "" {
		t.Fatalf("loose ref file %q (%v)", loose, err)
	}
	assertNoLocks(t, s.Path())
	wantRef(t, s, "refs/heads/main", b)
	wantRef(t, s, "refs/tags/readproof/runs/r17", a)
	got, err := s.Refs("refs/tags/readproof/runs/")
	if err != nil || len(got) != 31 {
		t.Fatalf("Refs: %d refs, %v", len(got), err)
	}
	if out := git(t, s.Path(), "for-each-ref", "--format=%(refname)"); strings.Count(out, "\n") != 32 {
		t.Fatalf("git for-each-ref:\n%s", out)
	}
	data, err := os.ReadFile(filepath.Join(s.Path(), "packed-refs"))
	if err != nil || !strings.HasPrefix(string(data), "# pack-refs with: sorted \n") {
		t.Fatalf("packed-refs: %v\n%s", err, data)
	}
	Fsck(t, s.Path())
	if err := WriteNewRefs(s, []Ref{{Name: "refs/heads/x", OID: a}}); !errors.Is(err, ErrRefsExist) {
		t.Fatalf("second write: %v, want ErrRefsExist", err)
	}

	s2 := NewTestStore(t)
	c := mkCommit(t, s2, "c")
	mustUpdate(t, s2, RefUpdate{Name: "refs/heads/main", New: c})
	if err := WriteNewRefs(s2, []Ref{{Name: "refs/heads/x", OID: c}}); !errors.Is(err, ErrRefsExist) {
		t.Fatalf("write beside a loose ref: %v, want ErrRefsExist", err)
	}
	assertNoLocks(t, s2.Path())
}

// TestWriteNewRefsRefusesBadInput: a bad name, a bad id, a name given twice
// and a ref that is also a directory of refs write nothing.
func TestWriteNewRefsRefusesBadInput(t *testing.T) {
	t.Parallel()
	s := NewTestStore(t)
	a := mkCommit(t, s, "a")
	for name, refs := range map[string][]Ref{
		"bad name": {{Name: "refs/heads/a..b", OID: a}},
		"bad id":   {{Name: "refs/heads/a", OID: "xyz"}},
		"twice":    {{Name: "refs/heads/a", OID: a}, {Name: "refs/heads/a", OID: a}},
		"dir/file": {{Name: "refs/heads/a", OID: a}, {Name: "refs/heads/a-b", OID: a}, {Name: "refs/heads/a/b", OID: a}},
	} {
		if err := WriteNewRefs(s, refs); err == nil {
			t.Errorf("%s: written", name)
		}
		if _, err := os.Stat(filepath.Join(s.Path(), "packed-refs")); err == nil {
			t.Fatalf("%s: packed-refs written", name)
		}
	}
	assertNoLocks(t, s.Path())
}
