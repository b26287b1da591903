package adapters_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/adapters"
)

func gitSpec(url, ref, path string) adapters.Spec {
	return adapters.Spec{Type: "git", URL: url, Ref: ref, Path: path}
}

func TestGitRefsAndRevision(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo := newGitRepo(t, base, "repo")
	write(t, filepath.Join(repo, "docs", "policy.md"), "v1\n")
	runGit(t, repo, "add", ".")
	runGit(t, repo, "commit", "-q", "-m", "v1")
	runGit(t, repo, "tag", "-a", "-m", "release", "v1")
	runGit(t, repo, "tag", "light")
	c1 := runGit(t, repo, "rev-parse", "HEAD")
	write(t, filepath.Join(repo, "docs", "policy.md"), "v2\n")
	runGit(t, repo, "commit", "-q", "-am", "v2")
	c2 := runGit(t, repo, "rev-parse", "HEAD")
	env := adapters.Env{BaseDir: base, CacheDir: t.TempDir()}

	for ref, want := range map[string]string{"": "v2\n", "HEAD": "v2\n", "main": "v2\n", "refs/heads/main": "v2\n", "v1": "v1\n", "light": "v1\n", "refs/tags/v1": "v1\n", c1: "v1\n", c2: "v2\n"} {
		r, err := fetchSpec(t, gitSpec("repo", ref, "docs/policy.md"), env)
		if err != nil {
			t.Fatalf("ref %q: %v", ref, err)
		}
		if string(r.Content) != want {
			t.Errorf("ref %q: %q, want %q", ref, r.Content, want)
		}
		// One git process answers both: the commit and the blob at its path.
		ids := strings.Fields(runGit(t, repo, "rev-parse", orHEAD(ref)+"^{commit}", orHEAD(ref)+"^{commit}:docs/policy.md"))
		if len(ids) != 2 {
			t.Fatalf("ref %q: git rev-parse printed %q", ref, ids)
		}
		commit, blob := ids[0], ids[1]
		if r.Revision != commit+":"+blob {
			t.Errorf("ref %q: revision %q, want %s:%s", ref, r.Revision, commit, blob)
		}
		if r.Provenance["commit"] != commit || r.Provenance["blob"] != blob || r.Provenance["source_type"] != "git" || r.Provenance["path"] != "docs/policy.md" {
			t.Errorf("ref %q: provenance %v", ref, r.Provenance)
		}
		if r.ContentType != "text/markdown" {
			t.Errorf("content type %q", r.ContentType)
		}
	}

	// A missing ref: a clear error naming the ref and the resource.
	_, err := fetchSpec(t, gitSpec("repo", "no-such-branch", "docs/policy.md"), env)
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), uri) || !strings.Contains(err.Error(), `"no-such-branch"`) || !strings.Contains(err.Error(), "check ref") {
		t.Errorf("missing ref: %v", err)
	}
	missing := strings.Repeat("ab", 20)
	_, err = fetchSpec(t, gitSpec("repo", missing, "docs/policy.md"), env)
	if !errors.Is(err, adapters.ErrConfig) || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing commit: %v", err)
	}
	// Missing path, directory, symlink.
	_, err = fetchSpec(t, gitSpec("repo", "main", "docs/nope.md"), env)
	if !errors.Is(err, adapters.ErrNotFound) || !strings.Contains(err.Error(), "docs/nope.md") {
		t.Errorf("missing path: %v", err)
	}
	_, err = fetchSpec(t, gitSpec("repo", "main", "docs"), env)
	wantRefused(t, err, adapters.RuleRegular)
	if err := os.Symlink("/etc/passwd", filepath.Join(repo, "link")); err != nil {
		t.Fatal(err)
	}
	runGit(t, repo, "add", "link")
	runGit(t, repo, "commit", "-q", "-m", "link")
	_, err = fetchSpec(t, gitSpec("repo", "main", "link"), env)
	wantRefused(t, err, adapters.RuleRegular)
}

func orHEAD(ref string) string {
	if ref == "" {
		return "HEAD"
	}
	return ref
}

func TestGitCacheIsDisposable(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	repo := newGitRepo(t, base, "repo")
	cache := filepath.Join(t.TempDir(), "cache")
	env := adapters.Env{BaseDir: base, CacheDir: cache}
	commit := runGit(t, repo, "rev-parse", "HEAD")
	if _, err := fetchSpec(t, gitSpec("repo", "main", "README"), env); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(cache); err != nil {
		t.Fatal(err)
	}
	r, err := fetchSpec(t, gitSpec("repo", "main", "README"), env)
	if err != nil || string(r.Content) != "fixture\n" {
		t.Fatalf("after deleting the cache: %q, %v", r.Content, err)
	}

	// A commit id already in the cache is read without fetching, so it
	// survives the repository going away; a branch needs the remote.
	if err := os.RemoveAll(repo); err != nil {
		t.Fatal(err)
	}
	r, err = fetchSpec(t, gitSpec(repo, commit, "README"), env)
	if err != nil || string(r.Content) != "fixture\n" {
		t.Fatalf("pinned commit from the cache: %q, %v", r.Content, err)
	}
	_, err = fetchSpec(t, gitSpec(repo, "main", "README"), env)
	if !errors.Is(err, adapters.ErrNotFound) || !strings.Contains(err.Error(), "no repository") {
		t.Errorf("branch of a deleted repository: %v", err)
	}
}

func TestGitLocalConfinement(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	base := filepath.Join(top, "project")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := newGitRepo(t, top, "elsewhere")
	env := adapters.Env{BaseDir: base, CacheDir: t.TempDir()}
	for _, u := range []string{outside, "file://" + outside, "../elsewhere"} {
		_, err := fetchSpec(t, gitSpec(u, "main", "README"), env)
		wantRefused(t, err, adapters.RuleRoots)
	}
	// Outside the roots, a repository that exists and one that does not
	// get the same answer (issue 13.9, as for the filesystem source).
	answer := func(u string) string {
		_, err := fetchSpec(t, gitSpec(u, "main", "README"), env)
		wantRefused(t, err, adapters.RuleRoots)
		if errors.Is(err, adapters.ErrNotFound) {
			t.Fatalf("%s: %v reveals that no repository is there", u, err)
		}
		return strings.ReplaceAll(err.Error(), u, "URL")
	}
	if present, missing := answer("../elsewhere"), answer("../nowhere"); present != missing {
		t.Errorf("outside the roots, an existing and a missing repository are answered differently:\n%s\n%s", present, missing)
	}
	if err := os.Symlink(outside, filepath.Join(base, "link")); err != nil {
		t.Fatal(err)
	}
	_, err := fetchSpec(t, gitSpec("link", "main", "README"), env)
	wantRefused(t, err, adapters.RuleRoots)
	env.Roots = []string{top}
	if _, err := fetchSpec(t, gitSpec("link", "main", "README"), env); err != nil {
		t.Fatalf("with the root declared: %v", err)
	}
}

func TestGitNetworkPolicy(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	newGitRepo(t, base, "repo")
	port := startGitDaemon(t, base)
	daemonURL := fmt.Sprintf("git://127.0.0.1:%d/repo", port)
	env := adapters.Env{CacheDir: t.TempDir()}
	_, err := fetchSpec(t, gitSpec(daemonURL, "main", "README"), env)
	wantRefused(t, err, adapters.RuleLoopback)
	_, err = fetchSpec(t, gitSpec(fmt.Sprintf("git://localhost:%d/repo", port), "main", "README"), env)
	wantRefused(t, err, adapters.RuleLoopback)
	env.Network = loopback
	if _, err := fetchSpec(t, gitSpec(daemonURL, "main", "README"), env); err != nil {
		t.Fatalf("allow-listed daemon: %v", err)
	}
	// git daemon's "ERR access denied or repository not exported" is "not found".
	if _, err := fetchSpec(t, gitSpec(fmt.Sprintf("git://127.0.0.1:%d/nope", port), "main", "README"), env); !errors.Is(err, adapters.ErrNotFound) {
		t.Errorf("missing repository over git://: %v", err)
	}

	srv := startGitHTTP(t, base)
	env = adapters.Env{CacheDir: t.TempDir()}
	_, err = fetchSpec(t, gitSpec(srv.URL+"/repo", "main", "README"), env)
	wantRefused(t, err, adapters.RuleLoopback)
	// A name is caught when dialled, inside go-git's HTTP transport.
	_, err = fetchSpec(t, gitSpec(strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)+"/repo", "main", "README"), env)
	wantRefused(t, err, adapters.RuleLoopback)
	env.Network = loopback
	if _, err := fetchSpec(t, gitSpec(srv.URL+"/repo", "main", "README"), env); err != nil {
		t.Fatalf("allow-listed smart HTTP: %v", err)
	}
	// A missing repository on a reachable server is "not found".
	_, err = fetchSpec(t, gitSpec(srv.URL+"/nope", "main", "README"), env)
	if err == nil || !strings.Contains(err.Error(), uri) {
		t.Errorf("missing repository over http: %v", err)
	}

	// Other shapes of remote URL are checked by host before go-git dials.
	for _, u := range []string{"git@127.0.0.1:org/repo.git", "ssh://git@[::1]/repo.git", "ssh://169.254.169.254/x"} {
		_, err := fetchSpec(t, gitSpec(u, "main", "README"), adapters.Env{CacheDir: t.TempDir()})
		if !errors.Is(err, adapters.ErrRefused) || !strings.Contains(err.Error(), uri) {
			t.Errorf("%s: %v", u, err)
		}
	}
}

func TestGitSpecValidation(t *testing.T) {
	for _, s := range []adapters.Spec{
		gitSpec("", "main", "a"),
		gitSpec("https://example.com/r.git", "main", ""),
		gitSpec("https://example.com/r.git", "main", "../a"),
		gitSpec("https://example.com/r.git", "bad ref", "a"),
		gitSpec("ftp://example.com/r.git", "main", "a"),
		gitSpec("file://host/r.git", "main", "a"),
	} {
		if err := adapters.Check(s, adapters.Env{}); !errors.Is(err, adapters.ErrConfig) {
			t.Errorf("Check(%+v) = %v", s, err)
		}
	}
	if err := adapters.Check(gitSpec("https://example.com/r.git", "", "docs/a.md"), adapters.Env{}); err != nil {
		t.Errorf("Check(good) = %v", err)
	}
}

// TestGitLocalRepositoryRedirects: a local repository is confined by where
// git reads it from, not only by the path declared. Stock git's upload-pack
// follows a gitdir file (the url itself, or its .git), a commondir file, an
// alternates file, and links inside the repository; each of these, pointing
// outside the roots, is refused before git runs, and all of them can be
// committed to (or unpacked into) a project whose readproof.toml names them.
func TestGitLocalRepositoryRedirects(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	base := filepath.Join(top, "project")
	if err := os.MkdirAll(base, 0o755); err != nil {
		t.Fatal(err)
	}
	outside := newGitRepo(t, top, "elsewhere")
	outsideGit := filepath.Join(outside, ".git")
	commit := runGit(t, outside, "rev-parse", "HEAD")
	env := adapters.Env{BaseDir: base, CacheDir: t.TempDir()}

	write(t, filepath.Join(base, "gitfile"), "gitdir: "+outsideGit+"\n")
	write(t, filepath.Join(base, "common", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(base, "common", "commondir"), outsideGit+"\n")
	if err := os.MkdirAll(filepath.Join(base, "dotgitfile"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(base, "dotgitfile", ".git"), "gitdir: "+outsideGit+"\n")
	if err := os.MkdirAll(filepath.Join(base, "dotgitlink"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outsideGit, filepath.Join(base, "dotgitlink", ".git")); err != nil {
		t.Fatal(err)
	}
	// A bare repository whose objects are the outside repository's.
	bare := filepath.Join(base, "linked.git")
	write(t, filepath.Join(bare, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(bare, "refs", "heads", "main"), commit+"\n")
	if err := os.Symlink(filepath.Join(outsideGit, "objects"), filepath.Join(bare, "objects")); err != nil {
		t.Fatal(err)
	}
	alt := filepath.Join(base, "alternates.git")
	write(t, filepath.Join(alt, "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(alt, "refs", "heads", "main"), commit+"\n")
	write(t, filepath.Join(alt, "objects", "info", "alternates"), filepath.Join(outsideGit, "objects")+"\n")
	// A directory that is no repository, beside a gitdir file git tries
	// after it (url + ".git").
	if err := os.MkdirAll(filepath.Join(base, "plain"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(base, "plain.git"), "gitdir: "+outsideGit+"\n")

	// Read as git reads them: a gitdir file's path is what follows
	// "gitdir: " (a second space included), a commondir's and an
	// alternate's keep their trailing spaces and carriage returns.
	mkLinkedRepo := func(dir string, objects string) {
		write(t, filepath.Join(dir, "HEAD"), "ref: refs/heads/main\n")
		write(t, filepath.Join(dir, "refs", "heads", "main"), commit+"\n")
		if objects != "" {
			if err := os.Symlink(objects, filepath.Join(dir, "objects")); err != nil {
				t.Fatal(err)
			}
		}
	}
	mkLinkedRepo(filepath.Join(base, " spaced"), filepath.Join(outsideGit, "objects"))
	write(t, filepath.Join(base, "spaced"), "gitdir:  spaced\n")
	mkLinkedRepo(filepath.Join(base, "common2 "), filepath.Join(outsideGit, "objects"))
	write(t, filepath.Join(base, "trailing", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(base, "trailing", "commondir"), "../common2 \n")
	// Links below a linked objects directory, and below a linked
	// subdirectory of it.
	objs := filepath.Join(base, "objs")
	entries, err := os.ReadDir(filepath.Join(outsideGit, "objects"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.MkdirAll(objs, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(outsideGit, "objects", e.Name()), filepath.Join(objs, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	mkLinkedRepo(filepath.Join(base, "hop.git"), objs)
	mkLinkedRepo(filepath.Join(base, "hop2.git"), "")
	if err := os.MkdirAll(filepath.Join(base, "hop2.git", "objects"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(objs, e.Name()), filepath.Join(base, "hop2.git", "objects", e.Name())); err != nil {
			t.Fatal(err)
		}
	}

	for _, u := range []string{"gitfile", "common", "dotgitfile", "dotgitlink", "linked.git", "alternates.git", "plain", "spaced", "trailing", "hop.git", "hop2.git"} {
		r, err := fetchSpec(t, gitSpec(u, "main", "README"), env)
		if err == nil {
			t.Errorf("%s: read %q from the repository outside the roots", u, r.Content)
			continue
		}
		wantRefused(t, err, adapters.RuleRoots)
	}
	// A url with nothing there, pinned to a commit, is fetched when the
	// cache lacks the commit: git then tries url.git.
	write(t, filepath.Join(base, "gone.git"), "gitdir: "+outsideGit+"\n")
	r, err := fetchSpec(t, gitSpec("gone", commit, "README"), env)
	if err == nil {
		t.Errorf("gone, pinned: read %q from the repository outside the roots", r.Content)
	} else {
		wantRefused(t, err, adapters.RuleRoots)
	}
	// With the outside declared a root, each is read.
	env.Roots = []string{base, outside}
	for _, u := range []string{"gitfile", "common", "dotgitfile", "dotgitlink", "linked.git", "alternates.git", "plain", "spaced", "trailing", "hop.git", "hop2.git"} {
		if _, err := fetchSpec(t, gitSpec(u, "main", "README"), env); err != nil {
			t.Errorf("%s with its target a root: %v", u, err)
		}
	}
}

// TestGitLocalIgnoresHookEnvironment: readproof runs from git hooks (its
// own pre-commit and pre-push hooks run `readproof status`), whose
// environment can point git at another repository's objects
// (GIT_OBJECT_DIRECTORY, as a pre-receive hook's quarantine does) or at a
// namespace of refs (GIT_NAMESPACE). The local source's upload-pack
// inherited them and read the wrong repository; the store's own git calls
// already drop them.
func TestGitLocalIgnoresHookEnvironment(t *testing.T) {
	base := t.TempDir()
	newGitRepo(t, base, "repo")
	other := t.TempDir()
	for _, kv := range [][2]string{{"GIT_OBJECT_DIRECTORY", other}, {"GIT_ALTERNATE_OBJECT_DIRECTORIES", other}, {"GIT_NAMESPACE", "elsewhere"}, {"GIT_DIR", other}} {
		t.Run(kv[0], func(t *testing.T) {
			t.Setenv(kv[0], kv[1])
			r, err := fetchSpec(t, gitSpec("repo", "main", "README"), adapters.Env{BaseDir: base, CacheDir: t.TempDir()})
			if err != nil || string(r.Content) != "fixture\n" {
				t.Errorf("with %s=%s: %q, %v", kv[0], kv[1], r.Content, err)
			}
		})
	}
}

// TestGitLocalBesideBareRepository: git stops at the first path it takes
// for the repository (url/.git of a work tree), so a bare repository
// beside the project (project.git, outside the roots, a common layout) is
// not git's, and the project's own repository is read.
func TestGitLocalBesideBareRepository(t *testing.T) {
	t.Parallel()
	top := t.TempDir()
	base := newGitRepo(t, top, "project")
	newGitRepo(t, top, "elsewhere")
	write(t, filepath.Join(top, "project.git"), "gitdir: "+filepath.Join(top, "elsewhere", ".git")+"\n")
	r, err := fetchSpec(t, gitSpec(".", "main", "README"), adapters.Env{BaseDir: base, CacheDir: t.TempDir()})
	if err != nil || string(r.Content) != "fixture\n" {
		t.Fatalf("the project's own repository: %q, %v", r.Content, err)
	}
}
