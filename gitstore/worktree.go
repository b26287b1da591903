package gitstore

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// TrackedByWorkTree reports the files below dir that the git work tree
// around dir tracks (its index lists them): a store committed into a
// project's repository before the store carried its .gitignore. top is the
// work tree's top directory, given with files. It returns no files when dir is not inside a
// work tree, when git is not installed, or when git cannot answer: the
// check is advice, never a failure.
func TrackedByWorkTree(ctx context.Context, dir string) (top string, files []string) {
	git, err := findGit()
	if err != nil {
		return "", nil
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", nil
	}
	parent := filepath.Dir(abs)
	if !belowDotGit(parent) {
		return "", nil // no repository around: spare the git processes
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	run := func(args ...string) ([]byte, bool) {
		cmd := exec.CommandContext(ctx, git, append([]string{"-C", parent}, args...)...)
		// git finds the work tree from the directory: a hook's GIT_DIR,
		// GIT_INDEX_FILE and the like (often relative) must not steer it.
		cmd.Env = withoutLocationVars()
		out, err := cmd.Output()
		return out, err == nil
	}
	// ls-files first: it finds nothing (or fails) in the common case, a
	// store nobody committed, and the work tree's top is only asked for
	// when there is something to report (one git process, not two).
	out, ok := run("ls-files", "-z", "--full-name", "--", filepath.Base(abs))
	if !ok {
		return "", nil
	}
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) > 0 {
			files = append(files, string(f))
		}
	}
	if len(files) == 0 {
		return "", nil
	}
	out, ok = run("rev-parse", "--is-inside-work-tree", "--show-toplevel")
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if !ok || len(lines) != 2 || lines[0] != "true" {
		return "", nil
	}
	return lines[1], files
}

// withoutLocationVars is the environment with the location variables
// removed: an interactive Transport's, which adds nothing.
func withoutLocationVars() []string {
	return (&Transport{opts: TransportOptions{Interactive: true}}).env()
}

// belowDotGit reports whether dir or one of its parents holds a .git entry
// (a repository's directory, or the file of a linked work tree).
func belowDotGit(dir string) bool {
	for {
		if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
