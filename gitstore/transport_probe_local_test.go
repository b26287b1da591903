package gitstore

import (
	"context"
	"path/filepath"
	"testing"
)

// TestProbeCommitLocal: a remote on a local path (or file://) is read in
// place (localRepoPath says which URLs are); the commit read is the
// remote's ref.
func TestProbeCommitLocal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	remote := NewTestStore(t)
	c := mkCommit(t, remote, "journal")
	mustUpdate(t, remote, RefUpdate{Name: "refs/heads/main", New: c})
	_, tr := newTransport(t)
	for i, url := range []string{remote.Path(), "file://" + remote.Path()} {
		name := []string{"p", "f"}[i]
		if err := tr.AddRemote(ctx, name, url, nil); err != nil {
			t.Fatal(err)
		}
		raw, err := tr.ProbeCommit(ctx, name, "refs/heads/main")
		if err != nil {
			t.Fatal(err)
		}
		want := gitRaw(t, remote.Path(), "cat-file", "commit", string(c))
		if string(raw) != string(want) {
			t.Fatalf("%s: probe read\n%s\nwant\n%s", url, raw, want)
		}
	}
	// In place means without git: a transport whose git binary does not
	// exist still reads the local remote (the fetch path would fail).
	noGit := Transport{dir: tr.dir, git: filepath.Join(t.TempDir(), "no-such-git"), opts: tr.opts}
	for _, url := range []string{remote.Path(), "file://" + remote.Path()} {
		raw, err := noGit.ProbeCommitAt(ctx, url, "refs/heads/main")
		if err != nil {
			t.Fatalf("%s: not read in place: %v", url, err)
		}
		if want := gitRaw(t, remote.Path(), "cat-file", "commit", string(c)); string(raw) != string(want) {
			t.Fatalf("%s: in-place read\n%s\nwant\n%s", url, raw, want)
		}
	}
	for _, c := range []struct {
		url string
		ok  bool
	}{
		{remote.Path(), true}, {"file://" + remote.Path(), true}, {"relative/x.git", false},
		{"git://127.0.0.1/x.git", false}, {"https://h/x.git", false}, {filepath.Join(t.TempDir(), "none"), false},
	} {
		if _, ok := localRepoPath(c.url); ok != c.ok {
			t.Errorf("localRepoPath(%q) = %v, want %v", c.url, ok, c.ok)
		}
	}
}
