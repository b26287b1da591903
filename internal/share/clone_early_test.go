package share

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/readproof/readproof/gitstore"
)

// slowProbeGit puts a git on PATH that logs each command it runs, and the
// end of the journal probe (the one shallow fetch), which it holds for half a
// second first: what a clone starts while main is still being read shows
// in the log before "probe done".
func slowProbeGit(t *testing.T) (log string) {
	t.Helper()
	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	log = filepath.Join(bin, "log")
	script := `#!/bin/sh
printf '%s\n' "$*" >> '` + log + `'
case "$*" in
*--depth=1*)
	sleep 0.5
	'` + real + `' "$@"
	rc=$?
	echo "probe done" >> '` + log + `'
	exit $rc ;;
esac
exec '` + real + `' "$@"
`
	gitOnPath(t, bin, script)
	return log
}

// gitOnPath puts script, as git, in bin and bin first on PATH.
func gitOnPath(t *testing.T, bin, script string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(bin, "git"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
}

func logLines(t *testing.T, log string) []string {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// index of the first line holding s, or -1
func lineWith(lines []string, s string) int {
	for i, l := range lines {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// TestCloneFetchesWhileMainIsRead: a clone from git daemon lists the refs
// with protocol v0 and, since they mark the remote a store, fetches while
// the remote's main is read alone (the fetch starts before that read
// ends); the clone is whole and verified.
func TestCloneFetchesWhileMainIsRead(t *testing.T) {
	base := t.TempDir()
	a := newProject(t, map[string]string{"a": "alpha\n", "b": "beta\n"})
	a.run(t, "r1", "a")
	a.run(t, "r2", "b")
	dir := bareServer(t, base, "s.git")
	addRemote(t, a, "origin", dir)
	mustPush(t, a, "origin")
	d := startDaemon(t, base)

	log := slowProbeGit(t)
	target := filepath.Join(t.TempDir(), "c")
	res, err := Clone(context.Background(), d.url("s.git"), target, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.NewRuns) != 2 {
		t.Fatalf("clone: %d runs, want 2", len(res.NewRuns))
	}
	lines := logLines(t, log)
	list, fetch, probed := lineWith(lines, "ls-remote"), lineWith(lines, "fetch --refmap="), lineWith(lines, "probe done")
	if list < 0 || !strings.Contains(lines[list], "-c protocol.version=0 ls-remote") {
		t.Errorf("the clone listed the refs with %q, want protocol v0", lines[max(list, 0)])
	}
	if fetch < 0 || probed < 0 || fetch > probed {
		t.Errorf("the fetch (line %d) did not start before the read of main ended (line %d):\n%s", fetch, probed, strings.Join(lines, "\n"))
	}
	if out, err := exec.Command("git", "--git-dir", target, "fsck", "--strict", "--no-progress").CombinedOutput(); err != nil {
		t.Fatalf("git fsck of the clone: %v\n%s", err, out)
	}
}

// TestCloneEarlyFetchStopsOnRefusal: a remote whose listing names a
// readproof ref but whose main is a project's commit is refused; the fetch
// started beside the read of main is stopped and nothing is left (no
// store, no staging directory). A remote listing only main is not fetched
// from at all before it is refused, nor a remote over http(s), which a
// killed fetch cannot stop.
func TestCloneEarlyFetchStopsOnRefusal(t *testing.T) {
	base := t.TempDir()
	marked := projectRemote(t, base, "marked.git")
	git(t, marked, "update-ref", "refs/heads/readproof/chains/x", "refs/heads/main")
	projectRemote(t, base, "plain.git")
	d := startDaemon(t, base)
	h := startHTTP(t, base)
	for _, c := range []struct {
		name, url string
		fetched   bool
	}{
		{"marked.git", d.url("marked.git"), true}, {"plain.git", d.url("plain.git"), false},
		// over http(s) a killed git fetch leaves its git-remote-http
		// downloading (review4: a project of 160 MB of history refused
		// after 5.5 s, WaitDelay, and its download went on after)
		{"http-marked.git", h + "/marked.git", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			log := slowProbeGit(t)
			target := filepath.Join(t.TempDir(), "c")
			_, err := Clone(context.Background(), c.url, target, Options{})
			if !errors.Is(err, ErrNotStore) || !strings.Contains(err.Error(), "not a readproof journal") {
				t.Fatalf("clone of a project's repository: %v, want ErrNotStore for its main", err)
			}
			for _, p := range []string{target, gitstore.StagingDir(target)} {
				if _, err := os.Lstat(p); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s is left after the refused clone (%v)", p, err)
				}
			}
			lines := logLines(t, log)
			if fetched := lineWith(lines, "fetch --refmap=") >= 0; fetched != c.fetched {
				t.Errorf("fetch started: %v, want %v:\n%s", fetched, c.fetched, strings.Join(lines, "\n"))
			}
		})
	}
}

func TestNetworkURL(t *testing.T) {
	for u, want := range map[string]bool{
		"git://h/r.git": true, "https://h/r": true, "ssh://h/r": true, "HTTP://h/r": true, "host:r.git": true, "user@host:r": true,
		"file:///tmp/r": false, "FILE:///tmp/r": false, "/tmp/r.git": false, "./r:x": false, "r.git": false, "": false,
	} {
		if got := networkURL(u); got != want {
			t.Errorf("networkURL(%q) = %v, want %v", u, got, want)
		}
	}
}

// TestCloneInteractiveOneGitAtATime: a clone that lets git ask for
// credentials on the terminal (Interactive) from an http URL runs one git
// talking to the remote at a time (the listing, the read of main, the
// fetch), so two never prompt at once; from git:// (no credentials) they
// overlap as without a terminal.
func TestCloneInteractiveOneGitAtATime(t *testing.T) {
	base := t.TempDir()
	a := newProject(t, map[string]string{"a": "alpha\n"})
	a.run(t, "r1", "a")
	addRemote(t, a, "origin", bareServer(t, base, "s.git"))
	mustPush(t, a, "origin")
	h := startHTTP(t, base)
	d := startDaemon(t, base)

	real, err := exec.LookPath("git")
	if err != nil {
		t.Skip("git is not installed")
	}
	bin := t.TempDir()
	log, wait := filepath.Join(bin, "log"), filepath.Join(bin, "wait")
	// Each git that talks to the remote logs its start and end and, before
	// it runs, waits for a second one to start, for at most the tenths of
	// a second in wait: two gits the clone lets overlap then do, however
	// late the machine's load starts the second (a quarter of a second's
	// sleep here, in place of the wait, let a loaded machine start the
	// read of main after the listing and the fetch had ended: no overlap
	// seen, the test failed). A clone that runs one at
	// a time makes its first git wait the whole bound: long for the
	// clone expected to overlap (a clone that no longer does is slow
	// and fails), a second for the one expected not to (it runs alone
	// all the same; one that no longer does overlaps in that second).
	script := `#!/bin/sh
case "$*" in
*ls-remote*|*" fetch "*)
	echo start >> '` + log + `'
	i=0
	while [ "$(grep -c start '` + log + `')" -lt 2 ] && [ $i -lt "$(cat '` + wait + `')" ]; do
		sleep 0.1
		i=$((i+1))
	done
	'` + real + `' "$@"
	rc=$?
	echo end >> '` + log + `'
	exit $rc ;;
esac
exec '` + real + `' "$@"
`
	gitOnPath(t, bin, script)
	for _, c := range []struct {
		url     string
		overlap bool
		wait    string // tenths of a second
	}{{h + "/s.git", false, "10"}, {d.url("s.git"), true, "300"}} {
		os.Remove(log)
		if err := os.WriteFile(wait, []byte(c.wait), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Clone(context.Background(), c.url, filepath.Join(t.TempDir(), "c"), Options{Interactive: true}); err != nil {
			t.Fatalf("clone of %s: %v", c.url, err)
		}
		most, now := 0, 0
		for _, l := range logLines(t, log) {
			if l == "start" {
				now++
			} else {
				now--
			}
			most = max(most, now)
		}
		if got := most > 1; got != c.overlap {
			t.Errorf("clone of %s: at most %d gits talked to the remote at once; want overlap %v", c.url, most, c.overlap)
		}
	}
}
