package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestCopyLocalObjects: a local repository's objects are copied into an
// empty one (git builds the index); a source it does not copy (not on a
// path, objects in an alternate, shallow) is declined with nothing written.
func TestCopyLocalObjects(t *testing.T) {
	ctx := context.Background()
	remote := NewTestStore(t)
	c := mkCommit(t, remote, "journal")
	mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
	if err := remote.Sync(); err != nil {
		t.Fatal(err)
	}
	decline := func(name, url string) {
		t.Helper()
		dst, tr := newTransport(t)
		copied, err := tr.CopyLocalObjects(ctx, url)
		if copied || err != nil {
			t.Fatalf("%s: copied %v, %v; want declined", name, copied, err)
		}
		if ok, _ := dst.Has(c); ok {
			t.Fatalf("%s: a declined copy wrote objects", name)
		}
	}
	decline("git URL", "git://127.0.0.1/x.git")
	decline("relative path", "relative/x.git")

	dst, tr := newTransport(t)
	copied, err := tr.CopyLocalObjects(ctx, "file://"+remote.Path())
	if !copied || err != nil {
		t.Fatalf("copy: %v, %v", copied, err)
	}
	if ok, err := dst.Has(c); !ok || err != nil {
		t.Fatalf("the copy lacks %s (%v)", c, err)
	}
	if _, err := dst.Commit(c); err != nil {
		t.Fatal(err)
	}

	shallow := filepath.Join(remote.Path(), "shallow")
	writeTestFile(t, shallow, string(c)+"\n")
	decline("shallow", remote.Path())
	os.Remove(shallow)
	alt := filepath.Join(remote.Path(), "objects", "info", "alternates")
	os.MkdirAll(filepath.Dir(alt), 0o755)
	writeTestFile(t, alt, t.TempDir()+"\n")
	decline("alternates", remote.Path())
}

func writeTestFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
