package gitstore

import (
	"strings"
	"testing"
)

// TestStderrKeepsDubiousOwnership (session 22): git refuses a repository
// another user owns with a first line that names the cause and four lines
// of advice after it; the error kept the last four lines, so a pull or clone
// of such a remote said only "git config --global --add safe.directory
// PATH; fatal: Could not read from remote repository.; ..." without why.
func TestStderrKeepsDubiousOwnership(t *testing.T) {
	stderr := `fatal: detected dubious ownership in repository at '/srv/remote'
To add an exception for this directory, call:

	git config --global --add safe.directory /srv/remote
fatal: Could not read from remote repository.

Please make sure you have the correct access rights
and the repository exists.
`
	got := stderrSummary(stderr)
	if !strings.Contains(got, "detected dubious ownership in repository at '/srv/remote'") {
		t.Fatalf("git's stderr kept as %q: the cause is lost", got)
	}
	if !strings.HasSuffix(got, "and the repository exists.") {
		t.Fatalf("git's stderr kept as %q: the last lines are lost", got)
	}
	if got, want := stderrSummary("a\nb\nc\nd\ne\n"), "b; c; d; e"; got != want {
		t.Fatalf("stderrSummary = %q, want %q", got, want)
	}
}
