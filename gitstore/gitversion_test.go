package gitstore

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestParseGitVersion(t *testing.T) {
	for _, c := range []struct {
		in           string
		major, minor int
		ok           bool
	}{
		{"git version 2.39.5\n", 2, 39, true},
		{"git version 2.34.1", 2, 34, true},
		{"git version 2.39.3 (Apple Git-146)\n", 2, 39, true},
		{"git version 2.45.1.windows.1\n", 2, 45, true},
		{"git version 3.0.0-rc1", 3, 0, true},
		{"git version 2.40", 2, 40, true},
		{"git version 2", 0, 0, false},
		{"git version x.39.1", 0, 0, false},
		{"git version 2.-1.0", 0, 0, false},
		{"hub version 2.14.2", 0, 0, false},
		{"", 0, 0, false},
		{"git version 99999.1", 0, 0, false},
	} {
		major, minor, ok := ParseGitVersion(c.in)
		if ok != c.ok || major != c.major || minor != c.minor {
			t.Errorf("ParseGitVersion(%q) = %d, %d, %v; want %d, %d, %v", c.in, major, minor, ok, c.major, c.minor, c.ok)
		}
	}
}

func FuzzParseGitVersion(f *testing.F) {
	for _, s := range []string{"git version 2.39.5", "git version 2.39.3 (Apple Git-146)", "git version 2.45.1.windows.1", "git version 1.8", "git version \x00.\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		major, minor, ok := ParseGitVersion(s)
		if !ok {
			return
		}
		if major < 0 || minor < 0 {
			t.Fatalf("%q: negative %d.%d", s, major, minor)
		}
		// what it read, written the way git writes it, reads the same
		m2, n2, ok2 := ParseGitVersion(fmt.Sprintf("git version %d.%d.0", major, minor))
		if !ok2 || m2 != major || n2 != minor {
			t.Fatalf("%q: %d.%d does not read back (%d.%d %v)", s, major, minor, m2, n2, ok2)
		}
		// the note never carries a control character or a space from git's output
		if note := oldGitNoteFor(s); strings.ContainsFunc(note, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("%q: note %q has a control character", s, note)
		}
	})
}

func TestOldGitNoteFor(t *testing.T) {
	if got := oldGitNoteFor("git version 2.34.1"); !strings.Contains(got, "this is git 2.34.1, and readproof needs git 2.39 or later") {
		t.Errorf("2.34.1: %q", got)
	}
	if got := oldGitNoteFor("git version 1.9.5"); !strings.Contains(got, "this is git 1.9.5") {
		t.Errorf("1.9.5: %q", got)
	}
	for _, v := range []string{"git version 2.39.0", "git version 2.47.1", "git version 3.0.0", "not git", ""} {
		if got := oldGitNoteFor(v); got != "" {
			t.Errorf("%q: want no note, got %q", v, got)
		}
	}
	if got := oldGitNoteFor("git version 2.30.0\x1b[31m.evil"); strings.Contains(got, "\x1b") {
		t.Errorf("escape kept: %q", got)
	}
}

// fakeGit writes a git that answers `git version` with version and fails
// every other command as a git that does not know its option does.
func fakeGit(t *testing.T, version string) string {
	t.Helper()
	if runtime.GOOS == "windows" {
		t.Skip("a shell script stands in for git")
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nif [ \"$1\" = version ]; then echo \"git version " + version + "\"; exit 0; fi\n" +
		"echo \"error: unknown option \\`cruft'\" >&2\necho 'usage: git repack [<options>]' >&2\nexit 129\n"
	if err := os.WriteFile(filepath.Join(dir, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(dir, "git")
}

func TestOldGitNamedOnUsageFailure(t *testing.T) {
	dir := t.TempDir()
	old := fakeGit(t, "2.34.1")
	_, err := runGit(context.Background(), old, dir, "repack", "repack", "--cruft")
	if err == nil || !strings.Contains(err.Error(), "unknown option") || !strings.Contains(err.Error(), "this is git 2.34.1, and readproof needs git 2.39 or later") {
		t.Fatalf("runGit with git 2.34.1: %v", err)
	}
	// the transport's commands (pull, push, clone) say the same
	t.Setenv("PATH", filepath.Dir(old))
	tr, err := NewTransport(dir, TransportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = tr.run(context.Background(), false, "ls-remote", "--symref", "--", "origin")
	if err == nil || !strings.Contains(err.Error(), "this is git 2.34.1, and readproof needs git 2.39 or later") {
		t.Fatalf("transport with git 2.34.1: %v", err)
	}

	// a new enough git failing the same way gets no note
	recent := fakeGit(t, "2.39.5")
	_, err = runGit(context.Background(), recent, dir, "repack", "repack", "--cruft")
	if err == nil || strings.Contains(err.Error(), "readproof needs git") {
		t.Fatalf("runGit with git 2.39.5: %v", err)
	}
}

func TestOldGitNotBlamedForOtherFailures(t *testing.T) {
	if looksLikeUsage(128, "fatal: not a git repository (or any of the parent directories): .git") {
		t.Error("a missing repository is not a usage error")
	}
	if looksLikeUsage(1, "error: failed to push some refs") {
		t.Error("a rejected push is not a usage error")
	}
	for _, s := range []string{"error: unknown option `cruft'", "git: 'maintenance' is not a git command. See 'git --help'.", "error: unknown switch `z'"} {
		if !looksLikeUsage(1, s) {
			t.Errorf("%q: not seen as a usage error", s)
		}
	}
	if !looksLikeUsage(129, "") {
		t.Error("exit 129 is git's usage exit")
	}
}
