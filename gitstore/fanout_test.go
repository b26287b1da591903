package gitstore

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
)

// TestLooseObjectMissedByFanoutCache: putObject looks for a loose copy only
// in fan-out directories that existed when first looked for since the last
// flush. A loose object another writer adds meanwhile to a directory seen
// missing is written again by us: both writes succeed, the object reads
// back, and the store stays valid for git, as loose (a few objects) and as a
// pack (many).
func TestLooseObjectMissedByFanoutCache(t *testing.T) {
	t.Parallel()
	for _, many := range []bool{false, true} {
		s := NewTestStore(t)
		first := []byte("first")
		fh := plumbing.ComputeHash(plumbing.BlobObject, first)
		if _, err := s.PutBlob(first); err != nil {
			t.Fatal(err)
		}
		// another object in the same fan-out directory
		var other []byte
		for i := 0; ; i++ {
			other = []byte(fmt.Sprintf("other %d", i))
			if plumbing.ComputeHash(plumbing.BlobObject, other)[0] == fh[0] {
				break
			}
		}
		cmd := GitCommand(t, s.Path(), "hash-object", "-w", "--stdin")
		cmd.Stdin = strings.NewReader(string(other))
		out, err := cmd.Output()
		if err != nil {
			t.Fatal(err)
		}
		oh := OID(strings.TrimSpace(string(out)))
		if _, err := os.Stat(filepath.Join(s.Path(), "objects", string(oh[:2]), string(oh[2:]))); err != nil {
			t.Fatal(err)
		}
		got, err := s.PutBlob(other)
		if err != nil || got != oh {
			t.Fatalf("PutBlob = %s, %v; want %s", got, err, oh)
		}
		if many {
			for i := 0; i < packThreshold+4; i++ {
				if _, err := s.PutBlob([]byte(fmt.Sprintf("filler %d", i))); err != nil {
					t.Fatal(err)
				}
			}
		}
		c := mkCommit(t, s, "tip")
		tree, _ := s.PutTree([]TreeEntry{{Name: "first", Mode: ModeFile, OID: OID(fh.String())}, {Name: "other", Mode: ModeFile, OID: oh}})
		c2, err := s.PutCommit(Commit{Tree: tree, Parents: []OID{c}, Author: testSig(), Committer: testSig(), Message: "both\n"})
		if err != nil {
			t.Fatal(err)
		}
		mustUpdate(t, s, RefUpdate{Name: "refs/heads/main", New: c2})
		for _, id := range []OID{OID(fh.String()), oh} {
			if _, err := s.Blob(id); err != nil {
				t.Errorf("many=%v: blob %s: %v", many, id, err)
			}
		}
		if out, err := exec.Command("git", "--git-dir", s.Path(), "cat-file", "-p", string(oh)).Output(); err != nil || string(out) != string(other) {
			t.Errorf("many=%v: git cat-file: %q, %v", many, out, err)
		}
		Fsck(t, s.Path())
	}
}
