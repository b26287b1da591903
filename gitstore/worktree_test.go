package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TrackedByWorkTree answers as before it asked ls-files first (its caller
// reads top only with files): the files of
// a committed store with the work tree's top, nothing for a store nobody
// committed, nothing outside a work tree (no repository, or inside a
// repository's .git directory).
func TestTrackedByWorkTree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(root, "proj")
	store := filepath.Join(proj, "sub", ".readproof")
	if err := os.MkdirAll(store, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if top, files := TrackedByWorkTree(ctx, store); top != "" || files != nil {
		t.Fatalf("no repository: got %q %v", top, files)
	}
	git(t, "", "init", "-q", proj)
	if _, files := TrackedByWorkTree(ctx, store); files != nil {
		t.Fatalf("untracked store: got files %v", files)
	}
	git(t, filepath.Join(proj, ".git"), "--work-tree="+proj, "add", "-f", "sub/.readproof/HEAD")
	top, files := TrackedByWorkTree(ctx, store)
	if top != proj || !slices.Equal(files, []string{"sub/.readproof/HEAD"}) {
		t.Fatalf("tracked store: got %q %v; want %q [sub/.readproof/HEAD]", top, files, proj)
	}
	inGit := filepath.Join(proj, ".git", "x")
	if err := os.MkdirAll(inGit, 0o755); err != nil {
		t.Fatal(err)
	}
	if top, files := TrackedByWorkTree(ctx, inGit); top != "" || files != nil {
		t.Fatalf("inside .git: got %q %v", top, files)
	}
}
