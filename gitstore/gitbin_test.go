package gitstore

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindGitFollowsPATH: the git binary is looked up once per PATH value,
// as exec.LookPath finds it: a new PATH is looked up again, a failure is
// not remembered (git installed meanwhile is found), a PATH with a relative
// directory is never cached, and a binary that is gone is looked up again
// after the command that found it gone.
func TestFindGitFollowsPATH(t *testing.T) {
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	check := func(stage string) {
		t.Helper()
		want, wantErr := exec.LookPath("git")
		got, err := findGit()
		if (err == nil) != (wantErr == nil) || got != want {
			t.Fatalf("%s: findGit = %q, %v; exec.LookPath = %q, %v", stage, got, err, want, wantErr)
		}
	}
	check("PATH as given")
	check("PATH as given, again")
	bin := t.TempDir()
	t.Setenv("PATH", bin)
	check("no git on PATH")
	fake := filepath.Join(bin, "git")
	if err := os.Symlink(real, fake); err != nil {
		t.Fatal(err)
	}
	check("git installed on the same PATH")
	t.Setenv("PATH", bin+string(os.PathListSeparator)+filepath.Dir(real))
	check("another PATH")
	if err := os.Remove(fake); err != nil {
		t.Fatal(err)
	}
	// the cached binary is gone: the command fails as it did when git
	// vanished after the lookup, and the next one looks again
	tr := &Transport{dir: t.TempDir(), git: fake}
	if _, err := tr.run(context.Background(), false, "version"); err == nil {
		t.Fatal("a missing git binary ran")
	}
	check("binary gone")
	t.Setenv("PATH", "relative"+string(os.PathListSeparator)+filepath.Dir(real))
	check("relative PATH entry")
	gitBinary.mu.Lock()
	cached := gitBinary.path == os.Getenv("PATH") && gitBinary.git != ""
	gitBinary.mu.Unlock()
	if cached {
		t.Fatal("a lookup through a relative PATH directory was cached")
	}
}

// TestTransportRunStdin: a command given no input reads the shared
// /dev/null (end of file at once); one given input reads it.
func TestTransportRunStdin(t *testing.T) {
	t.Parallel()
	_, tr := newTransport(t)
	ctx := context.Background()
	for i := 0; i < 2; i++ { // the second run reuses the open /dev/null
		out, err := tr.run(ctx, false, "hash-object", "--stdin")
		if err != nil || string(out) != "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391\n" {
			t.Fatalf("no input: %q, %v", out, err)
		}
	}
	out, err := tr.runInput(ctx, false, strings.NewReader("x\n"), "hash-object", "--stdin")
	if err != nil || string(out) != "587be6b4c3f93f93c489c0111bba5596147a26cb\n" {
		t.Fatalf("input: %q, %v", out, err)
	}
	if devNull() == nil {
		t.Fatal(errors.New("/dev/null not opened"))
	}
}
