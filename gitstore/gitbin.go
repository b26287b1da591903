package gitstore

// Finding the git binary once per process. exec.LookPath("git") reads PATH
// and stats every directory's candidate up to git's, and exec opens
// /dev/null for a command whose stdin is not set: for each git process
// readproof ran. Both are done once here; the lookup again when PATH
// changes (tests change it) or when the binary found is gone.

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
)

// gitBinary caches the git binary found on PATH, and /dev/null opened for
// reading (every git command's stdin when it reads none).
var gitBinary struct {
	mu   sync.Mutex
	path string // the PATH git was found with
	git  string // "" when not looked up (or forgotten)
	null *os.File
}

// findGit returns exec.LookPath("git"), looked up once per value of PATH.
// Only an absolute result found through a PATH of absolute directories is
// kept: a relative directory's content depends on the working directory,
// and a failure is not remembered (git may be installed meanwhile).
func findGit() (string, error) {
	p := os.Getenv("PATH")
	gitBinary.mu.Lock()
	defer gitBinary.mu.Unlock()
	if gitBinary.git != "" && gitBinary.path == p {
		return gitBinary.git, nil
	}
	git, err := exec.LookPath("git")
	if err != nil {
		return "", err
	}
	if filepath.IsAbs(git) && absolutePath(p) {
		gitBinary.path, gitBinary.git = p, git
	}
	return git, nil
}

// absolutePath reports whether every directory of a PATH value is absolute
// (an empty entry means the working directory).
func absolutePath(p string) bool {
	for _, d := range filepath.SplitList(p) {
		if !filepath.IsAbs(d) {
			return false
		}
	}
	return true
}

// forgetGit drops the cached binary after starting git failed because
// the file is gone (git was moved or uninstalled): the next command looks
// it up again, as every command did.
func forgetGit(git string, err error) {
	var pe *fs.PathError
	if !errors.As(err, &pe) || !errors.Is(err, fs.ErrNotExist) {
		return
	}
	gitBinary.mu.Lock()
	defer gitBinary.mu.Unlock()
	if gitBinary.git == git {
		gitBinary.git = ""
	}
}

// devNull returns /dev/null opened for reading, once per process (exec
// would open and close it for every command), or nil when it cannot be
// opened (exec then opens it itself and reports the failure).
func devNull() *os.File {
	gitBinary.mu.Lock()
	defer gitBinary.mu.Unlock()
	if gitBinary.null == nil {
		if f, err := os.Open(os.DevNull); err == nil {
			gitBinary.null = f
		}
	}
	return gitBinary.null
}
