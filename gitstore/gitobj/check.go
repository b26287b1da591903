package gitobj

import (
	"os"
	"path/filepath"
	"strings"
)

// IsObjectID reports whether s is a SHA-1 object id as git prints it: 40
// lower-case hex digits. It takes bytes too, so that a line read need not
// become a string to be checked.
func IsObjectID[T ~string | ~[]byte](s T) bool {
	if len(s) != 40 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// IsGitDir applies git's own test for a repository directory (a bare
// repository, or the .git directory of a work tree): a HEAD file naming a
// ref or an object, and objects/ and refs/ directories.
func IsGitDir(dir string) bool {
	head, err := os.ReadFile(filepath.Join(dir, "HEAD"))
	if err != nil {
		return false
	}
	h := strings.TrimSpace(string(head))
	if !strings.HasPrefix(h, "ref: refs/") && !IsObjectID(strings.ToLower(h)) {
		return false
	}
	for _, d := range []string{"objects", "refs"} {
		fi, err := os.Stat(filepath.Join(dir, d))
		if err != nil || !fi.IsDir() {
			return false
		}
	}
	return true
}

// IsRepository reports whether dir is the root of a git work tree (it holds
// a .git directory or gitfile) or a git directory itself (IsGitDir).
func IsRepository(dir string) bool {
	if _, err := os.Lstat(filepath.Join(dir, ".git")); err == nil {
		return true
	}
	return IsGitDir(dir)
}
