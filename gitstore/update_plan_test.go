package gitstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestMissingLooseListsLikeLstat: planPacked's look for loose ref files,
// which lists a directory holding many of the refs of an Update, finds the
// same refs missing as an lstat of each: files present and absent, a
// directory in a ref's place, a missing directory, a directory that is a
// file, and below the listing threshold.
func TestMissingLooseListsLikeLstat(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	mk := func(rel string) {
		p := filepath.Join(base, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	var dirs []string
	for _, n := range []int{3, listAtLeast, listAtLeast + 7} {
		d := filepath.Join(base, fmt.Sprintf("many%d", n))
		dirs = append(dirs, d)
		for i := 0; i < n; i += 3 {
			mk(filepath.Join(filepath.Base(d), fmt.Sprintf("r%02d", i)))
		}
		if err := os.MkdirAll(filepath.Join(d, "r01"), 0o700); err != nil { // a directory in a ref's place
			t.Fatal(err)
		}
	}
	dirs = append(dirs, filepath.Join(base, "absent"))
	mk("file")
	dirs = append(dirs, filepath.Join(base, "file"), filepath.Join(base, "file", "below"))
	for _, d := range dirs {
		for _, n := range []int{3, listAtLeast, listAtLeast + 7} {
			var refs []*refTx
			for i := 0; i < n; i++ {
				refs = append(refs, &refTx{root: &d, RefUpdate: &RefUpdate{Name: fmt.Sprintf("r%02d", i)}})
			}
			want := map[string]bool{}
			for _, r := range refs {
				if _, err := os.Lstat(r.path()); err != nil && isMissing(err) {
					want[r.path()] = true
				}
			}
			got := missingLoose(d, refs)
			if len(got) != len(want) {
				t.Errorf("%s, %d refs: %d missing, lstat finds %d", d, n, len(got), len(want))
			}
			for _, r := range got {
				if !want[r.path()] {
					t.Errorf("%s: missing, lstat finds it", r.path())
				}
			}
		}
	}
}

// TestRenameFileErrors: renameFile gives os.Rename's errors: a missing
// source is not-exist, a directory in the target's place is EEXIST (it is
// not replaced), and a file in it is replaced.
func TestRenameFileErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	a, b, d := filepath.Join(dir, "a"), filepath.Join(dir, "b"), filepath.Join(dir, "d")
	os.WriteFile(a, []byte("a"), 0o600)
	os.WriteFile(b, []byte("b"), 0o600)
	os.Mkdir(d, 0o700)
	for _, c := range []struct{ from, to string }{{filepath.Join(dir, "none"), b}, {a, d}} {
		got, want := renameFile(c.from, c.to), os.Rename(c.from, c.to)
		if got == nil || want == nil || got.Error() != want.Error() || errors.Is(got, fs.ErrNotExist) != errors.Is(want, fs.ErrNotExist) || errors.Is(got, syscall.EEXIST) != errors.Is(want, syscall.EEXIST) {
			t.Errorf("rename %s %s: %v, os.Rename %v", c.from, c.to, got, want)
		}
	}
	if err := renameFile(a, b); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(b); err != nil || string(data) != "a" {
		t.Fatalf("b = %q, %v", data, err)
	}
}

// TestLessJoinedMatchesConcatenation: checkPackedNames's comparisons
// without concatenation answer as the concatenated strings do.
func TestLessJoinedMatchesConcatenation(t *testing.T) {
	names := []string{"", "a", "b", "a/b", "a-x", "a.x", "a0", "a/", "ab", "refs/heads/x", "refs/heads/x/y", "refs/heads/x0", "refs/heads", "refs/heads/w"}
	for _, a := range names {
		for _, b := range names {
			for _, c := range []byte{'0', '/'} {
				if got, want := lessJoined(a, b, c), a < b+string(c); got != want {
					t.Errorf("lessJoined(%q, %q, %q) = %v, want %v", a, b, c, got, want)
				}
			}
			if got, want := isChild(a, b), strings.HasPrefix(a, b+"/"); got != want {
				t.Errorf("isChild(%q, %q) = %v, want %v", a, b, got, want)
			}
		}
	}
}
