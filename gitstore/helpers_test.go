package gitstore

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// git runs stock git on the repository and returns its trimmed stdout,
// failing the test on error.
func git(t testing.TB, gitDir string, args ...string) string {
	t.Helper()
	cmd := GitCommand(t, gitDir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return strings.TrimRight(string(out), "\n")
}

// gitHashObjects writes each content as a loose blob with one stock `git
// hash-object -w` (another writer's objects) and returns their ids in
// order: one process for all, where a hash-object --stdin per blob was one
// each.
func gitHashObjects(t testing.TB, gitDir string, contents []string) []OID {
	t.Helper()
	dir := t.TempDir()
	args := []string{"hash-object", "-w", "--no-filters", "--"}
	for i, c := range contents {
		f := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(f, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, f)
	}
	var ids []OID
	for _, id := range strings.Fields(git(t, gitDir, args...)) {
		ids = append(ids, OID(id))
	}
	if len(ids) != len(contents) {
		t.Fatalf("git hash-object wrote %d objects, want %d", len(ids), len(contents))
	}
	return ids
}

// gitRaw is git without trimming the output.
func gitRaw(t testing.TB, gitDir string, args ...string) []byte {
	t.Helper()
	cmd := GitCommand(t, gitDir, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// gitObject is one object as stock git reads it.
type gitObject struct {
	Kind string
	Data []byte
}

// gitObjects reads the objects ids with one `git cat-file --batch`, in
// order; each comes back with the type and the bytes `git cat-file TYPE ID`
// prints for it. One process instead of one per object (TestBatchWritesOnePack
// read 300 blobs with 300 processes); a missing object fails the test.
func gitObjects(t testing.TB, gitDir string, ids []OID) []gitObject {
	t.Helper()
	var in bytes.Buffer
	for _, id := range ids {
		in.WriteString(string(id) + "\n")
	}
	cmd := GitCommand(t, gitDir, "cat-file", "--batch")
	cmd.Stdin = &in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git cat-file --batch: %v\n%s", err, stderr.String())
	}
	r := bufio.NewReader(bytes.NewReader(out))
	objs := make([]gitObject, len(ids))
	for i, id := range ids {
		header, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("git cat-file --batch: no answer for %s: %v", id, err)
		}
		var gotID, kind string
		var size int
		if n, _ := fmt.Sscanf(header, "%s %s %d\n", &gotID, &kind, &size); n != 3 || gotID != string(id) {
			t.Fatalf("git cat-file --batch for %s: %q", id, header)
		}
		data := make([]byte, size+1) // the content and a newline
		if _, err := io.ReadFull(r, data); err != nil || data[size] != '\n' {
			t.Fatalf("git cat-file --batch: content of %s: %v", id, err)
		}
		objs[i] = gitObject{Kind: kind, Data: data[:size]}
	}
	return objs
}

var testWhen = time.Date(2025, 3, 4, 5, 6, 7, 0, time.FixedZone("", 2*3600))

func testSig() Signature {
	return Signature{Name: "Read Proof", Email: "rp@example.invalid", When: testWhen}
}

// mkCommit writes a commit whose tree holds one file with the given content.
func mkCommit(t testing.TB, s Store, content string, parents ...OID) OID {
	t.Helper()
	blob, err := s.PutBlob([]byte(content))
	if err != nil {
		t.Fatal(err)
	}
	tree, err := s.PutTree([]TreeEntry{{Name: "f.txt", Mode: ModeFile, OID: blob}})
	if err != nil {
		t.Fatal(err)
	}
	c, err := s.PutCommit(Commit{Tree: tree, Parents: parents, Author: testSig(), Committer: testSig(), Message: content + "\n"})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustUpdate(t testing.TB, s Store, updates ...RefUpdate) {
	t.Helper()
	if err := s.Update(updates...); err != nil {
		t.Fatal(err)
	}
}

// lockFiles lists the lock files under the repository's refs and its top
// level.
func lockFiles(t testing.TB, gitDir string) []string {
	t.Helper()
	var locks []string
	filepath.WalkDir(gitDir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".lock") {
			locks = append(locks, p)
		}
		return nil
	})
	return locks
}

func assertNoLocks(t testing.TB, gitDir string) {
	t.Helper()
	if l := lockFiles(t, gitDir); len(l) > 0 {
		t.Fatalf("lock files left behind: %v", l)
	}
}

func wantRef(t testing.TB, s Store, name string, want OID) {
	t.Helper()
	got, err := s.Ref(name)
	if want == "" {
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("Ref(%s) = %q, %v; want ErrNotFound", name, got, err)
		}
		return
	}
	if err != nil || got != want {
		t.Fatalf("Ref(%s) = %q, %v; want %s", name, got, err, want)
	}
}

func fmtRefs(refs []Ref) string {
	var b strings.Builder
	for _, r := range refs {
		fmt.Fprintf(&b, "%s %s\n", r.OID, r.Name)
	}
	return b.String()
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}
