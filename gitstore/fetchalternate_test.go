package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFetchObjectsStorePathWithSeparator: a store whose path holds the
// path list separator (':' here) and a double quote is the alternate of
// the fetch's own object directory all the same: a second fetch offers
// what the store holds, and receives only the new commit, its tree and
// its blob, as a delta against the blob the store has (whose copy
// index-pack appends, so the pack is whole). Before, git split the path
// at ':' and saw none of the store: it received the whole history again.
func TestFetchObjectsStorePathWithSeparator(t *testing.T) {
	t.Parallel()
	up := filepath.Join(t.TempDir(), "up")
	mirrorGit(t, filepath.Dir(up), "init", "-q", "-b", "main", up)
	body := strings.Repeat("refunds within 30 days of purchase\n", 2000)
	commit := func(text string) OID {
		if err := os.WriteFile(filepath.Join(up, "f"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		mirrorGit(t, up, "add", "f")
		mirrorGit(t, up, "-c", "user.name=T", "-c", "user.email=t@example.test", "commit", "-qm", "c")
		return OID(strings.TrimSpace(mirrorGit(t, up, "rev-parse", "HEAD")))
	}
	c1 := commit(body)
	s, err := Init(filepath.Join(t.TempDir(), `"a:b`, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tr, err := NewTransport(s.Path(), TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.FetchObjects(context.Background(), up, []OID{c1}); err != nil {
		t.Fatal(err)
	}
	mirrorGit(t, s.Path(), "update-ref", "refs/heads/main", string(c1))
	first, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.idx"))
	c2 := commit(body + "and exchanges within 60\n")
	if err := tr.FetchObjects(context.Background(), up, []OID{c2}); err != nil {
		t.Fatal(err)
	}
	all, _ := filepath.Glob(filepath.Join(s.Path(), "objects", "pack", "*.idx"))
	if len(first) != 1 || len(all) != 2 {
		t.Fatalf("packs after each fetch: %v, then %v", first, all)
	}
	idx := all[0]
	if idx == first[0] {
		idx = all[1]
	}
	out := mirrorGit(t, s.Path(), "verify-pack", "-v", idx)
	if strings.Contains(out, string(c1)) {
		t.Errorf("the second fetch received %s again, the commit the store held:\n%s", c1, out)
	}
	mirrorGit(t, s.Path(), "update-ref", "refs/heads/main", string(c2))
	mirrorGit(t, s.Path(), "fsck", "--strict", "--no-progress")
}
