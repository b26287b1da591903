package share

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
	"github.com/readproof/readproof/internal/store"
)

// guardedRemote creates a remote with InitRemote under base whose hook runs
// this test binary (TestMain answers `hook pre-receive`).
func guardedRemote(t *testing.T, base, name string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(base, name)
	if _, err := InitRemote(context.Background(), dir, exe, false); err != nil {
		t.Fatal(err)
	}
	return dir
}

// pushRefused runs a plain git push and expects the remote to refuse it,
// with its refs unchanged.
func pushRefused(t *testing.T, gitDir, url string, args ...string) string {
	t.Helper()
	cmd := gitstore.GitCommand(t, gitDir, append([]string{"push", url}, args...)...)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("git push %s was accepted:\n%s", strings.Join(args, " "), out)
	}
	return string(out)
}

// TestGuardedRemote (issue 12.8): a remote from `remote init` takes
// readproof pushes, and refuses what plain git could otherwise do to it:
// a --mirror push from a stale store, a moved run tag, a rewound chain, a
// planted record of the wrong kind, a forged manifest, a project branch.
func TestGuardedRemote(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	dir := guardedRemote(t, base, "shared.git")
	for _, kv := range GuardConfig {
		if got := git(t, dir, "config", "--get", kv[0]); got != kv[1] {
			t.Fatalf("%s = %q, want %q", kv[0], got, kv[1])
		}
	}
	d := startDaemon(t, base)
	for _, kind := range []string{"path", "daemon"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			remoteDir := guardedRemote(t, base, kind+".git")
			u := remoteDir
			if kind == "daemon" {
				u = d.url(kind + ".git")
			}
			a := newProject(t, map[string]string{"a": "alpha\n", "b": "beta\n"})
			addRemote(t, a, "origin", u)
			a.run(t, "r1", "a")
			a.tag(t, "a", "v1")
			mustPush(t, a, "origin")
			stale := filepath.Join(t.TempDir(), "stale")
			if _, err := Clone(context.Background(), u, stale, Options{}); err != nil {
				t.Fatal(err)
			}
			a.write(t, "a", "alpha 2\n")
			a.run(t, "r2", "a", "b")
			a.tag(t, "a", "v1")
			mustPush(t, a, "origin")
			before := allRefs(t, remoteDir)

			out := pushRefused(t, stale, u, "--mirror")
			if !strings.Contains(out, "readproof guard") && !strings.Contains(out, "rejected") {
				t.Errorf("mirror push refused without a reason:\n%s", out)
			}
			pushRefused(t, stale, u, "--force", "refs/heads/main:refs/heads/main")
			r1 := git(t, a.path(), "rev-parse", store.RunsPrefix+"r1")
			r2 := git(t, a.path(), "rev-parse", store.RunsPrefix+"r2")
			out = pushRefused(t, a.path(), u, "--force", r1+":"+store.RunsPrefix+"r2")
			if !strings.Contains(out, "never moved") {
				t.Errorf("moved run tag: %s", out)
			}
			out = pushRefused(t, a.path(), u, r2+":"+store.TagsPrefix+"demo/b/planted")
			if !strings.Contains(out, "tag.json") {
				t.Errorf("manifest planted as a tag: %s", out)
			}
			out = pushRefused(t, a.path(), u, r1+":refs/heads/feature")
			if !strings.Contains(out, "not a shared readproof ref") {
				t.Errorf("project branch: %s", out)
			}
			// Open and aborted runs are local (issue 15: run abort): plain
			// git cannot share them either.
			if err := a.s.StartRun("wip"); err != nil {
				t.Fatal(err)
			}
			out = pushRefused(t, a.path(), u, store.OpenPrefix+"wip:"+store.OpenPrefix+"wip")
			if !strings.Contains(out, "not a shared readproof ref") {
				t.Errorf("open run: %s", out)
			}
			ab, err := a.s.AbortRun("wip")
			if err != nil {
				t.Fatal(err)
			}
			out = pushRefused(t, a.path(), u, ab.Ref+":"+ab.Ref)
			if !strings.Contains(out, "not a shared readproof ref") {
				t.Errorf("aborted run: %s", out)
			}
			// A forged manifest: the entry's bytes are not what it records.
			forged := forgeManifest(t, a.path(), r2)
			out = pushRefused(t, a.path(), u, forged+":"+store.RunsPrefix+"forged")
			if !strings.Contains(out, "entry 0") {
				t.Errorf("forged manifest: %s", out)
			}
			if after := allRefs(t, remoteDir); after != before {
				t.Fatalf("refused pushes changed the remote:\n%s\nwas\n%s", after, before)
			}
			// readproof itself still pushes and pulls.
			b := newProject(t, map[string]string{"a": "alpha\n"})
			addRemote(t, b, "origin", u)
			mustPull(t, b, "origin")
			b.run(t, "r3", "a")
			mustPush(t, b, "origin")
		})
	}
}

// forgeManifest writes a copy of manifest m whose first entry's file is
// replaced by other bytes, and returns its id.
func forgeManifest(t *testing.T, gitDir, m string) string {
	t.Helper()
	tree := git(t, gitDir, "rev-parse", m+"^{tree}")
	file := git(t, gitDir, "show", m+":manifest.json")
	_ = file
	blob := strings.TrimSpace(gitOut(t, gitDir, "forged bytes\n", "hash-object", "-w", "--stdin"))
	ls := git(t, gitDir, "ls-tree", "-r", tree)
	var lines []string
	for _, l := range strings.Split(ls, "\n") {
		if strings.HasSuffix(l, "\tcontent/demo/a") {
			l = "100644 blob " + blob + "\tcontent/demo/a"
		}
		lines = append(lines, l)
	}
	// mktree needs one level: rebuild content/demo with the new blob.
	demo := strings.TrimSpace(gitOut(t, gitDir, strings.Join(filterPrefix(lines, "content/demo/"), "\n")+"\n", "mktree"))
	content := strings.TrimSpace(gitOut(t, gitDir, "040000 tree "+demo+"\tdemo\n", "mktree"))
	mj := git(t, gitDir, "rev-parse", m+":manifest.json")
	root := strings.TrimSpace(gitOut(t, gitDir, "100644 blob "+mj+"\tmanifest.json\n040000 tree "+content+"\tcontent\n", "mktree"))
	return git(t, gitDir, "commit-tree", root, "-m", "forged")
}

func filterPrefix(lines []string, prefix string) []string {
	var out []string
	for _, l := range lines {
		meta, path, _ := strings.Cut(l, "\t")
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			out = append(out, meta+"\t"+rest)
		}
	}
	return out
}

// gitOut runs git with stdin.
func gitOut(t *testing.T, gitDir, stdin string, args ...string) string {
	t.Helper()
	cmd := gitstore.GitCommand(t, gitDir, args...)
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return string(out)
}

// TestGuardHookOnly: --hook-only guards an existing bare repository that
// allows deletions in its git configuration: the hook refuses them.
func TestGuardHookOnly(t *testing.T) {
	t.Parallel()
	dir := bareServer(t, t.TempDir(), "old.git")
	a := newProject(t, map[string]string{"a": "alpha\n"})
	addRemote(t, a, "origin", dir)
	a.run(t, "r1", "a")
	mustPush(t, a, "origin")
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := InitRemote(context.Background(), dir, exe, true); err != nil {
		t.Fatal(err)
	}
	git(t, dir, "config", "receive.denyDeletes", "false")
	out := pushRefused(t, a.path(), dir, ":"+store.RunsPrefix+"r1")
	if !strings.Contains(out, "deleting refs is refused") {
		t.Fatalf("deletion: %s", out)
	}
	if _, err := InitRemote(context.Background(), dir, exe, false); err == nil {
		t.Fatal("remote init over an existing repository succeeded")
	}
}
