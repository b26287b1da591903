package gitstore

import (
	"context"
	"errors"
	"os/exec"
	"reflect"
	"testing"
	"time"
)

// TestGitReaderMatches: the cat-file reader decodes blobs, trees and
// commits (a signed one included) as the go-git store does.
func TestGitReaderMatches(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	blob, err := s.PutBlob([]byte("hello\n"))
	if err != nil {
		t.Fatal(err)
	}
	sub, err := s.PutTree([]TreeEntry{{Name: "f", Mode: ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.PutTree([]TreeEntry{{Name: "a.json", Mode: ModeFile, OID: blob}, {Name: "dir", Mode: ModeDir, OID: sub}})
	if err != nil {
		t.Fatal(err)
	}
	when := time.Date(2026, 12, 1, 21, 0, 0, 0, time.UTC)
	sig := Signature{Name: "readproof", Email: "readproof@localhost", When: when}
	first, err := s.PutCommit(Commit{Tree: tree, Author: sig, Committer: sig, Message: "first\n"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := s.PutCommit(Commit{Tree: sub, Parents: []OID{first}, Author: sig, Committer: sig, Message: "second\n\nbody\n",
		Signature: "-----BEGIN SSH SIGNATURE-----\nabc\n-----END SSH SIGNATURE-----\n"})
	if err != nil {
		t.Fatal(err)
	}
	r := openGitReader(t, s)
	for _, id := range []OID{tree, sub} {
		want, _ := s.Tree(id)
		got, err := r.Tree(id)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("Tree(%s) = %v, %v; want %v", id, got, err, want)
		}
	}
	for _, id := range []OID{first, second} {
		want, _ := s.Commit(id)
		got, err := r.Commit(id)
		if err != nil || got.Tree != want.Tree || !reflect.DeepEqual(got.Parents, want.Parents) || got.Message != want.Message ||
			got.Signature != want.Signature || !got.Author.When.Equal(want.Author.When) || got.Committer.Name != want.Committer.Name {
			t.Fatalf("Commit(%s) = %+v, %v; want %+v", id, got, err, want)
		}
	}
	if data, err := r.Blob(blob); err != nil || string(data) != "hello\n" {
		t.Fatalf("Blob = %q, %v", data, err)
	}
	if _, err := r.Blob(tree); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Blob of a tree: %v", err)
	}
	if ok, err := r.Has("0123456789012345678901234567890123456789"); ok || err != nil {
		t.Fatalf("Has(missing) = %v, %v", ok, err)
	}
	if err := r.Update(); !errors.Is(err, ErrReadOnly) {
		t.Fatalf("Update: %v", err)
	}
}

// TestGitReaderIgnoresReplaceRefs: a pre-receive guard reads the pushed
// objects through git cat-file, which follows refs/replace/ (session 23,
// rereadc): a replace ref in the remote made the guard judge another
// object than the one pushed. The reader reads objects as stored, as the
// go-git store does.
func TestGitReaderIgnoresReplaceRefs(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	s := NewTestStore(t)
	real, err := s.PutBlob([]byte("as stored\n"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := s.PutBlob([]byte("a replacement\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Update(RefUpdate{Name: "refs/replace/" + string(real), New: other}); err != nil {
		t.Fatal(err)
	}
	r := openGitReader(t, s)
	got, err := r.Blob(real)
	if err != nil || string(got) != "as stored\n" {
		t.Fatalf("Blob(%s) = %q, %v; want %q", real, got, err, "as stored\n")
	}
}

// openGitReader writes s's objects out and opens a cat-file reader on it,
// closed when the test ends.
func openGitReader(t *testing.T, s Store) *gitReader {
	t.Helper()
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}
	r, err := OpenGitReader(context.Background(), s.Path())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r.(*gitReader)
}
