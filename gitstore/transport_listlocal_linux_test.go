package gitstore

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"syscall"
	"testing"
)

// TestPlainLooseRefs: the one-walk reader of a path remote's loose refs
// (plainLooseRefs) reads exactly the loose ref files, lock files aside, and
// listLocal with it lists what `git ls-remote --symref` lists; at any ref
// file that is not a plain loose ref (a symbolic ref, a link, a broken or
// oversized file, a name git would not take, a FIFO, a linked directory) it
// gives up, and listLocal answers as its three walks did: the same listing
// as git, a refusal naming the file, or the listing left to git.
func TestPlainLooseRefs(t *testing.T) {
	ctx := context.Background()
	tr, dir, r := bareRemote(t, "--quiet", "--bare", "--initial-branch=main")
	a := mkCommit(t, r, "a")
	b := mkCommit(t, r, "b", a)
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", New: a}, RefUpdate{Name: "refs/tags/readproof/runs/r0", New: a})
	git(t, dir, "pack-refs", "--all")
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", Old: a, New: b}, RefUpdate{Name: "refs/tags/readproof/runs/r1", New: b},
		RefUpdate{Name: "refs/heads/readproof/resources/d", New: a})
	if err := os.WriteFile(filepath.Join(dir, "refs", "heads", "x.lock"), []byte(string(a)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	asGit := func(what string) {
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
	found, ok := plainLooseRefs(dir)
	want := map[string]OID{"refs/heads/main": b, "refs/tags/readproof/runs/r1": b, "refs/heads/readproof/resources/d": a}
	if !ok || !maps.Equal(found, want) {
		t.Fatalf("plainLooseRefs: %v, %v; want %v", found, ok, want)
	}
	asGit("plain loose refs over packed ones")

	p := filepath.Join(dir, "refs", "heads", "odd")
	write := func(s string) func() error { return func() error { return os.WriteFile(p, []byte(s), 0o644) } }
	cases := []struct {
		what  string
		plant func() error
		then  string // "git": listed as git lists it; "refused"; "left": left to git
	}{
		{"a symbolic ref", write("ref: refs/heads/main\n"), "git"},
		{"an old-style symbolic link ref", func() error { return os.Symlink("refs/heads/main", p) }, "left"},
		{"a link to a ref file", func() error { return os.Symlink(filepath.Join(dir, "refs", "heads", "main"), p) }, "left"},
		{"a broken ref", write("not an id\n"), "left"},
		{"a ref file over the bound", write(string(a) + "\n" + string(make([]byte, maxRefFile))), "refused"},
		{"a FIFO", func() error { return syscall.Mkfifo(p, 0o644) }, "refused"},
		{"a linked directory", func() error { return os.Symlink(filepath.Join(dir, "refs", "tags"), p) }, "left"},
	}
	for _, c := range cases {
		if err := c.plant(); err != nil {
			t.Fatal(err)
		}
		if _, ok := plainLooseRefs(dir); ok {
			t.Errorf("%s: taken as a plain loose ref", c.what)
		}
		switch c.then {
		case "git":
			asGit(c.what)
		case "refused":
			if _, _, _, err := listLocal(dir); err == nil {
				t.Errorf("%s: listed, not refused", c.what)
			}
		case "left":
			if _, _, ok, err := listLocal(dir); ok || err != nil {
				t.Errorf("%s: listLocal %v, %v; want it left to git", c.what, ok, err)
			}
		}
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	// a name git would not take: Refs leaves it out, so the listing is git's
	bad := filepath.Join(dir, "refs", "heads", "a..b")
	if err := os.WriteFile(bad, []byte(string(a)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := plainLooseRefs(dir); ok {
		t.Error("a ref name git refuses: taken as a plain loose ref")
	}
	if _, _, ok, err := listLocal(dir); ok || err != nil {
		t.Errorf("a ref name git refuses: listLocal %v, %v; want it left to git", ok, err)
	}
	if err := os.Remove(bad); err != nil {
		t.Fatal(err)
	}
	asGit("plain again")
}
