package gitstore

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// TB is the part of testing.TB the helpers below use (a *testing.T or
// *testing.B satisfies it). It is declared here, not imported, so that
// gitstore, and with it the readproof binary, does not link the testing
// package, whose initialisation every readproof process would otherwise
// pay (docs/startup.md; internal/layering's TestProductNotTesting).
type TB interface {
	Helper()
	TempDir() string
	Cleanup(func())
	Fatalf(format string, args ...any)
	Skip(args ...any)
}

// SSHHomeFromEnvForTest makes the ssh configuration's home directory
// $HOME's (os.UserHomeDir) for the rest of the process, in place of the
// passwd entry's that ssh reads (sshUserHome): for a test binary, whose
// tests write their ~/.ssh/config under a HOME of their own. Call it from
// TestMain, before any test runs; the readproof binary never calls it.
func SSHHomeFromEnvForTest() { sshHomeForTest = os.UserHomeDir }

// NewTestStore creates a store in a fresh temporary directory for a test and
// closes it when the test ends. Its path is NewTestStore(t).Path().
func NewTestStore(t TB) Store {
	t.Helper()
	s, err := Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatalf("create test store: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// GitCommand returns a stock git command that runs on the repository at
// gitDir ("" for none, as for git init) with a hermetic environment (no
// system or user config). It skips the test when git is not installed.
// Git is found as the transport finds it (findGit: once per PATH value)
// and its stdin is the process's shared /dev/null unless the caller sets
// one: a PATH walk and an open of /dev/null per command were 10,000 of the
// gitstore test binary's logged file operations, each of which go test
// then resolves again.
func GitCommand(t TB, gitDir string, args ...string) *exec.Cmd {
	t.Helper()
	git, err := findGit()
	if err != nil {
		t.Skip("git is not installed")
	}
	if gitDir != "" {
		args = append([]string{"--git-dir=" + gitDir}, args...)
	}
	cmd := exec.Command(git, args...)
	cmd.Env = gitEnv()
	if null := devNull(); null != nil {
		cmd.Stdin = null
	}
	return cmd
}

// gitEnv is the environment minus every GIT_* variable, with config files
// and identities pinned so results do not depend on the machine.
func gitEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	return append(env,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_NAME=git test", "GIT_AUTHOR_EMAIL=git@example.invalid",
		"GIT_COMMITTER_NAME=git test", "GIT_COMMITTER_EMAIL=git@example.invalid",
		"GIT_TERMINAL_PROMPT=0",
	)
}

// Fsck runs stock `git fsck --strict --no-dangling` on the repository at
// path and fails the test with git's output unless it is clean (notices
// such as an unborn HEAD are fine). It skips the test when git is not
// installed.
func Fsck(t TB, path string) {
	t.Helper()
	gitDir, err := findGitDir(path)
	if err != nil {
		t.Fatalf("fsck: %v", err)
	}
	args := []string{"fsck", "--strict", "--no-dangling", "--no-progress"}
	// fsck starts `git commit-graph verify` and `git multi-pack-index
	// verify` (two processes, most of a small repository's fsck) even when
	// there is nothing for them to verify: where the repository has no
	// such file and no alternates, they are not started.
	objects := filepath.Join(gitDir, "objects")
	none := true
	for _, p := range []string{"info/commit-graph", "info/commit-graphs", "pack/multi-pack-index", "info/alternates"} {
		if _, err := os.Lstat(filepath.Join(objects, p)); !os.IsNotExist(err) {
			none = false
		}
	}
	if none {
		args = append([]string{"-c", "core.commitGraph=false", "-c", "core.multiPackIndex=false"}, args...)
	}
	out, err := GitCommand(t, gitDir, args...).CombinedOutput()
	var problems []string
	for _, line := range strings.Split(string(out), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "notice:") && !strings.HasPrefix(line, "Checking ") {
			problems = append(problems, line)
		}
	}
	if err != nil || len(problems) > 0 {
		t.Fatalf("git fsck --strict %s is not clean (%v):\n%s", gitDir, err, out)
	}
}

// UnpackForTest writes every object of the store at gitDir out as a loose
// file, one file an object, and removes the packs (with git
// unpack-objects, each pack moved aside first so that git does not find
// its objects there already). Tests that damage or remove one object's
// own file call it first: a write of a few objects makes a small pack,
// not loose files (writeSmallPack). Not for a store anything else is
// using.
func UnpackForTest(gitDir string) error {
	packDir := filepath.Join(gitDir, "objects", "pack")
	packs, err := filepath.Glob(filepath.Join(packDir, "pack-*.pack"))
	if err != nil || len(packs) == 0 {
		return err
	}
	git, err := findGit()
	if err != nil {
		return err
	}
	aside, err := os.MkdirTemp(gitDir, "unpack-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(aside)
	var moved []string
	for _, p := range packs {
		to := filepath.Join(aside, filepath.Base(p))
		if err := os.Rename(p, to); err != nil {
			return err
		}
		moved = append(moved, to)
		base := strings.TrimSuffix(p, ".pack")
		for _, ext := range []string{".idx", ".rev", ".bitmap", ".keep", ".promisor", ".mtimes"} {
			os.Remove(base + ext)
		}
	}
	for _, p := range moved {
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = runGitWith(context.Background(), git, gitDir, "unpack-objects", f, "unpack-objects", "-q")
		f.Close()
		if err != nil {
			return err
		}
	}
	return nil
}
