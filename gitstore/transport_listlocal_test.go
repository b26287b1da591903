package gitstore

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestListLocalSameAsGit: a repository on this machine read in place gives
// the refs and HEAD `git ls-remote --symref` gives (loose and packed refs,
// an annotated tag, a symbolic ref, HEAD on a branch, on a missing branch
// and detached), and is left to git (ok false) whenever git could answer
// otherwise: hideRefs in the repository's config, a ref naming a missing
// object, a broken loose ref, an include, a URL that is not a local bare
// repository, GIT_ALLOW_PROTOCOL set. LsRemoteHead and RemoteHead read in
// place only a remote whose URL the configuration settled without any
// hideRefs or protocol rule.
func TestListLocalSameAsGit(t *testing.T) {
	ctx := context.Background()
	tr, dir, r := bareRemote(t, "--quiet", "--bare", "--initial-branch=main")
	a := mkCommit(t, r, "a")
	b := mkCommit(t, r, "b", a)
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", New: b}, RefUpdate{Name: "refs/heads/x", New: a},
		RefUpdate{Name: "refs/tags/readproof/runs/r1", New: a})
	git(t, dir, "tag", "-a", "-m", "annotated", "v1", string(a))
	git(t, dir, "pack-refs", "--all")
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/x", Old: a, New: b}, RefUpdate{Name: "refs/heads/readproof/resources/d", New: a})
	git(t, dir, "symbolic-ref", "refs/heads/sym", "refs/heads/x")

	same := func(what string) {
		t.Helper()
		refs, head, ok, err := listLocal(dir)
		if err != nil || !ok {
			t.Fatalf("%s: not read in place (%v)", what, err)
		}
		wantRefs, wantHead, err := tr.lsRemoteSymref(ctx, dir) // git ls-remote --symref, parsed as it streams
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(refs, wantRefs) || head != wantHead {
			t.Fatalf("%s: in place %v, %q; git %v, %q", what, refs, head, wantRefs, wantHead)
		}
	}
	for _, h := range []string{"ref: refs/heads/main", "ref: refs/heads/x", "ref: refs/heads/gone", string(a)} {
		if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(h+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		same("HEAD " + h)
	}
	if _, _, ok, _ := listLocal("file://" + dir); !ok {
		t.Fatal("a file:// URL not read in place")
	}

	notInPlace := func(what string, change, undo func()) {
		t.Helper()
		change()
		if _, _, ok, _ := listLocal(dir); ok {
			t.Fatalf("%s: read in place", what)
		}
		undo()
		same("after " + what)
	}
	cfg := filepath.Join(dir, "config")
	orig, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restore := func() {
		if err := os.WriteFile(cfg, orig, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notInPlace("uploadpack.hideRefs", func() { git(t, dir, "config", "uploadpack.hideRefs", "refs/heads/x") }, restore)
	notInPlace("transfer.hideRefs", func() { git(t, dir, "config", "transfer.hideRefs", "refs/tags") }, restore)
	notInPlace("an include", func() { git(t, dir, "config", "include.path", "/nonexistent") }, restore)
	missing := filepath.Join(dir, "refs", "heads", "missing")
	notInPlace("a ref to a missing object", func() {
		os.WriteFile(missing, []byte("1111111111111111111111111111111111111111\n"), 0o644)
	}, func() { os.Remove(missing) })
	notInPlace("a broken loose ref", func() { os.WriteFile(missing, []byte("not an id\n"), 0o644) }, func() { os.Remove(missing) })
	notInPlace("a dangling symbolic ref", func() { os.WriteFile(missing, []byte("ref: refs/heads/none\n"), 0o644) }, func() { os.Remove(missing) })
	if _, _, ok, _ := listLocal("git://127.0.0.1/r.git"); ok {
		t.Fatal("a git:// URL read in place")
	}
	if _, _, ok, _ := listLocal(filepath.Base(dir)); ok {
		t.Fatal("a relative path read in place")
	}

	// LsRemoteHead reads in place only where the configuration settled the
	// URL (here by AddRemoteURL, with no insteadOf or hideRefs rule)
	tr.listAt = listTarget{}
	if _, _, err := tr.LsRemoteHead(ctx, "o"); err == nil {
		t.Fatal("an unknown remote listed")
	}
	if _, err := tr.AddRemoteURL(ctx, "o", dir, nil); err != nil {
		t.Fatal(err)
	}
	if tr.listAt != (listTarget{name: "o", url: dir}) {
		t.Fatalf("after AddRemoteURL: list at %+v", tr.listAt)
	}
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, []byte("[transfer]\n\thideRefs = refs/heads/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global) // upload-pack reads it too
	if _, err := tr.RemoteFetchURL(ctx, "o"); err != nil {
		t.Fatal(err)
	}
	if tr.listAt != (listTarget{}) {
		t.Fatalf("with transfer.hideRefs in the global scope: list at %+v", tr.listAt)
	}
	refs, _, err := tr.LsRemoteHead(ctx, "o")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.Name == "refs/heads/x" {
			t.Fatal("git listed a hidden ref")
		}
	}
	// git refuses a local path where the file protocol is not allowed:
	// so does the listing
	if err := os.WriteFile(global, []byte("[protocol \"file\"]\n\tallow = never\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.RemoteFetchURL(ctx, "o"); err != nil {
		t.Fatal(err)
	}
	if tr.listAt != (listTarget{}) {
		t.Fatalf("with protocol.file.allow = never: list at %+v", tr.listAt)
	}
	if _, _, err := tr.LsRemoteHead(ctx, "o"); err == nil {
		t.Fatal("listed through a protocol git does not allow")
	}
	t.Setenv("GIT_ALLOW_PROTOCOL", "git")
	if _, _, ok, _ := listLocal(dir); ok {
		t.Fatal("read in place with GIT_ALLOW_PROTOCOL=git")
	}
}
