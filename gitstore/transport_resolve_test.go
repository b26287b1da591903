package gitstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadLocalCommitSameAsCatFile: the probe's in-process read of a
// repository on this machine gives what `git cat-file commit REF` prints,
// for a loose ref and a packed one, a loose object and a packed one; what
// it cannot read alone (an annotated tag to peel, a symbolic ref, a missing
// ref, a blob) it leaves to git, and ProbeCommitAt still answers as git
// does.
func TestReadLocalCommitSameAsCatFile(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr, dir, r := bareRemote(t, "--quiet", "--bare")
	a := mkCommit(t, r, "a")
	b := mkCommit(t, r, "b", a)
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", New: b}, RefUpdate{Name: "refs/heads/other", New: a})
	git(t, dir, "tag", "-a", "-m", "annotated", "v1", string(a))
	git(t, dir, "symbolic-ref", "refs/heads/sym", "refs/heads/main")
	blob := git(t, dir, "hash-object", "-w", "--stdin")
	git(t, dir, "update-ref", "refs/tags/blob", blob)
	check := func(stage string, direct []string) {
		t.Helper()
		for _, ref := range []string{"refs/heads/main", "refs/heads/other", "refs/tags/v1", "refs/heads/sym", "refs/tags/blob", "refs/heads/none"} {
			raw, ok, _ := readLocalCommit(dir, ref)
			want, gitErr := GitCommand(t, dir, "cat-file", "commit", ref).Output()
			wantOK := false
			for _, d := range direct {
				wantOK = wantOK || d == ref
			}
			if ok != wantOK {
				t.Fatalf("%s: readLocalCommit(%s) ok = %v, want %v", stage, ref, ok, wantOK)
			}
			if ok && string(raw) != string(want) {
				t.Fatalf("%s: %s: read\n%s\ngit cat-file\n%s", stage, ref, raw, want)
			}
			got, err := tr.ProbeCommitAt(ctx, dir, ref)
			if (err == nil) != (gitErr == nil) || (err == nil && string(got) != string(want)) {
				t.Fatalf("%s: ProbeCommitAt(%s) = %q, %v; git cat-file %q, %v", stage, ref, got, err, want, gitErr)
			}
		}
	}
	check("loose", []string{"refs/heads/main", "refs/heads/other"})
	git(t, dir, "pack-refs", "--all")
	git(t, dir, "repack", "-a", "-d", "-q")
	git(t, dir, "prune-packed")
	check("packed", []string{"refs/heads/main", "refs/heads/other"})
}

// TestProbeCommitAtScratch: a remote that is not a bare repository on a
// path (here file:// to a work tree's repository) is probed through a
// scratch repository, laid out without git init, and removed after; the
// commit read is the remote's.
func TestProbeCommitAtScratch(t *testing.T) {
	ctx := context.Background()
	s, tr := newTransport(t)
	work := filepath.Join(t.TempDir(), "w")
	gitInit(t, work, "--quiet", "--initial-branch=main")
	if err := os.WriteFile(filepath.Join(work, "f"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gitw := func(args ...string) string {
		t.Helper()
		cmd := GitCommand(t, "", append([]string{"-C", work}, args...)...)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	gitw("add", "f")
	gitw("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "one")
	gitw("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "--allow-empty", "-m", "two")
	url := "file://" + work
	if _, ok := localRepoPath(url); ok {
		t.Fatal("a work tree counted as a bare repository")
	}
	tmp := t.TempDir()
	t.Setenv("TMPDIR", tmp)
	got, err := tr.ProbeCommitAt(ctx, url, "refs/heads/main")
	if err != nil {
		t.Fatal(err)
	}
	want := gitw("cat-file", "commit", "refs/heads/main")
	if string(got) != want {
		t.Fatalf("probe read\n%s\nwant\n%s", got, want)
	}
	if left, _ := os.ReadDir(tmp); len(left) != 0 {
		t.Fatalf("scratch repository left behind: %v", left)
	}
	// the scratch repository is made in the store (where the sweep finds
	// one a killed probe left), and removed there too
	if left, _ := filepath.Glob(filepath.Join(s.Path(), probePrefix+"*")); len(left) != 0 {
		t.Fatalf("scratch repository left in the store: %v", left)
	}
	if _, err := tr.ProbeCommitAt(ctx, url, "refs/heads/none"); err == nil {
		t.Fatal("a missing ref probed")
	}
}

// TestLsRemoteHeadSameAsTwoListings: one `ls-remote --symref` gives the
// refs `ls-remote --refs` gave (no HEAD, no peeled tags) and the HEAD
// RemoteHead reads, with HEAD on main, on another branch, on a missing
// branch and detached.
func TestLsRemoteHeadSameAsTwoListings(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	tr, dir, r := bareRemote(t, "--quiet", "--bare", "--initial-branch=main")
	a := mkCommit(t, r, "a")
	mustUpdate(t, r, RefUpdate{Name: "refs/heads/main", New: a}, RefUpdate{Name: "refs/heads/x", New: a},
		RefUpdate{Name: "refs/tags/readproof/runs/r1", New: a})
	git(t, dir, "tag", "-a", "-m", "annotated", "v1", string(a))
	for _, head := range []string{"ref: refs/heads/main", "ref: refs/heads/x", "ref: refs/heads/gone", string(a)} {
		if err := os.WriteFile(filepath.Join(dir, "HEAD"), []byte(head+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		refs, h, err := tr.LsRemoteHead(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		wantRefs, err := tr.LsRemote(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		wantHead, err := tr.RemoteHead(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(refs, wantRefs) || h != wantHead {
			t.Fatalf("HEAD %q: LsRemoteHead = %v, %q; LsRemote, RemoteHead = %v, %q", head, refs, h, wantRefs, wantHead)
		}
	}
}

// TestRemoteFetchURLSameAsLsRemoteGetURL: RemoteFetchURL answers what
// RemoteURL and `git ls-remote --get-url` answered: the URL with insteadOf
// applied, the URL of a remote configured only outside the repository
// (here in the environment), and ErrNoRemote for a name not configured.
// AddRemoteURL returns the URL only when no rewrite can apply.
func TestRemoteFetchURLSameAsLsRemoteGetURL(t *testing.T) {
	ctx := context.Background()
	s, tr := newTransport(t)
	got, err := tr.AddRemoteURL(ctx, "o", "/srv/a.git", nil)
	if err != nil || got != "/srv/a.git" {
		t.Fatalf("AddRemoteURL = %q, %v", got, err)
	}
	if u, err := tr.RemoteFetchURL(ctx, "o"); err != nil || u != "/srv/a.git" {
		t.Fatalf("RemoteFetchURL = %q, %v", u, err)
	}
	git(t, s.Path(), "config", "url.ssh://git@example.invalid/.insteadOf", "gh:")
	if got, err := tr.AddRemoteURL(ctx, "g", "gh:r.git", nil); err != nil || got != "" {
		t.Fatalf("AddRemoteURL with a rewrite configured = %q, %v", got, err)
	}
	for _, name := range []string{"o", "g"} {
		u, err := tr.RemoteFetchURL(ctx, name)
		want := git(t, s.Path(), "ls-remote", "--get-url", "--", name)
		if err != nil || u != want {
			t.Fatalf("RemoteFetchURL(%s) = %q, %v; git ls-remote --get-url: %q", name, u, err, want)
		}
	}
	if _, err := tr.RemoteFetchURL(ctx, "zz"); !errors.Is(err, ErrNoRemote) {
		t.Fatalf("unknown remote: %v", err)
	}
	t.Setenv("GIT_CONFIG_COUNT", "1")
	t.Setenv("GIT_CONFIG_KEY_0", "remote.env.url")
	t.Setenv("GIT_CONFIG_VALUE_0", "/srv/env.git")
	if u, err := tr.RemoteFetchURL(ctx, "env"); err != nil || u != "/srv/env.git" {
		t.Fatalf("remote from the environment: %q, %v", u, err)
	}
}

// bareRemote makes a repository with `git init ARGS` (a remote for the
// transport tests), opens it (closed when the test ends) and returns it
// with a transport to list it.
func bareRemote(t *testing.T, args ...string) (*Transport, string, Store) {
	t.Helper()
	_, tr := newTransport(t)
	dir := filepath.Join(t.TempDir(), "r.git")
	gitInit(t, dir, args...)
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return tr, dir, r
}
