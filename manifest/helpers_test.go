package manifest

import (
	"os/exec"
	"unicode/utf8"
)

func utf8Valid(s string) bool { return utf8.ValidString(s) }

// gitDiff runs stock git diff --no-index on the files a and b in dir.
func gitDiff(dir string) (string, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return "", err
	}
	cmd := exec.Command("git", "diff", "--no-index", "--no-color", "--no-ext-diff", "a", "b")
	cmd.Dir = dir
	out, err := cmd.Output()
	return string(out), err
}
