package gitstore

// The oldest git readproof works with. Commands that run stock git (pull,
// push, clone, gc, the guard, hooks) use options older gits do not know
// (`repack --cruft` came in 2.37, for one); such a git fails with a usage
// error that names an option, not the version. When a git command fails
// that way, the version is asked once and, when it is older, the error
// says so. Nothing is asked while git succeeds: a working git costs no
// extra process.

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// MinGitMajor and MinGitMinor: git 2.39, the version CI runs.
const (
	MinGitMajor = 2
	MinGitMinor = 39
)

// usageSigns are what git writes when it does not know a command, an
// option or a subcommand (exit 129 for most, 1 or 128 for some).
var usageSigns = []string{
	"unknown option", "unknown switch", "is not a git command", "unknown subcommand",
	"invalid option", "usage: git ", "unknown value for", "bad config variable",
}

// looksLikeUsage reports whether a failed git's exit code and stderr look
// like a command or option it does not know.
func looksLikeUsage(exit int, stderr string) bool {
	if exit == 129 {
		return true
	}
	lower := strings.ToLower(stderr)
	for _, s := range usageSigns {
		if strings.Contains(lower, s) {
			return true
		}
	}
	return false
}

// ParseGitVersion reads the first line of `git version` ("git version
// 2.39.5", "git version 2.39.3 (Apple Git-146)", "git version
// 2.45.1.windows.1"): its major and minor numbers.
func ParseGitVersion(out string) (major, minor int, ok bool) {
	line, _, _ := strings.Cut(out, "\n")
	rest, found := strings.CutPrefix(strings.TrimSpace(line), "git version ")
	if !found {
		return 0, 0, false
	}
	ver, _, _ := strings.Cut(rest, " ")
	parts := strings.SplitN(ver, ".", 3)
	if len(parts) < 2 {
		return 0, 0, false
	}
	major, err1 := strconv.Atoi(parts[0])
	minor, err2 := strconv.Atoi(parts[1])
	if err1 != nil || err2 != nil || major < 0 || minor < 0 || len(parts[0]) > 4 || len(parts[1]) > 4 {
		return 0, 0, false
	}
	return major, minor, true
}

// gitVersionLine runs `git version` (5 s at most) and returns its first
// line, "" when it fails.
func gitVersionLine(git string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, git, "version")
	if null := devNull(); null != nil {
		cmd.Stdin = null
	}
	out, err := cmd.Output()
	if err != nil {
		return ""
	}
	line, _, _ := strings.Cut(string(out), "\n")
	if len(line) > 200 {
		line = line[:200]
	}
	return strings.TrimSpace(line)
}

// oldGitNote is what a failed git command's error adds when the failure
// looks like an unknown command or option and the git that ran is older
// than readproof's oldest: the version and the fix. "" otherwise (and
// when the version cannot be read).
func oldGitNote(git string, exit int, stderr string) string {
	if git == "" || !looksLikeUsage(exit, stderr) {
		return ""
	}
	return oldGitNoteFor(gitVersionLine(git))
}

// oldGitNoteFor is oldGitNote's message for the `git version` line line.
func oldGitNoteFor(line string) string {
	major, minor, ok := ParseGitVersion(line)
	if !ok || major > MinGitMajor || (major == MinGitMajor && minor >= MinGitMinor) {
		return ""
	}
	ver, _, _ := strings.Cut(strings.TrimPrefix(line, "git version "), " ")
	ver = strings.Map(func(r rune) rune {
		if r < 0x21 || r > 0x7e {
			return -1
		}
		return r
	}, ver)
	return fmt.Sprintf("this is git %s, and readproof needs git %d.%d or later: install a newer git (https://git-scm.com) and run the command again",
		ver, MinGitMajor, MinGitMinor)
}
